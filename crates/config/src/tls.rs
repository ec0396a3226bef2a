//! TLS settings, from `hazelcast.network.ssl`, written as Hazelcast Enterprise writes them.
//!
//! Two ways to name the member's key, as in Hazelcast: a PKCS#12 key store
//! (`BasicSSLContextFactory`'s `keyStore`, `keyStorePassword`, `keyStoreType`), or PEM files
//! (`OpenSSLEngineFactory`'s `keyFile`, `keyFilePassword`, `keyCertChainFile`). Trust likewise: a
//! PKCS#12 `trustStore` or a PEM `trustCertCollectionFile`. This crate reads no file: the member
//! loads them at start and fails there, naming the path, when one is missing or wrong.
//!
//! Invariant after [`TlsConfig::validate`]: when `enabled`, `key` is set, the protocol is one
//! rustls speaks, and mutual authentication has something to trust.

use crate::error::{invalid, ConfigError};
use std::path::PathBuf;

/// The factory Hazelcast uses for Java key stores.
pub const BASIC_FACTORY: &str = "com.hazelcast.nio.ssl.BasicSSLContextFactory";
/// The factory Hazelcast uses for OpenSSL and its PEM files.
pub const OPENSSL_FACTORY: &str = "com.hazelcast.nio.ssl.OpenSSLEngineFactory";

/// TLS on the member's port (client connections and member links).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsConfig {
    /// `hazelcast.network.ssl.enabled`, default false.
    pub enabled: bool,
    /// `hazelcast.network.ssl.factory-class-name`; only [`BASIC_FACTORY`] and
    /// [`OPENSSL_FACTORY`] are known (ferrogrid builds the same context from either's
    /// properties). Empty when not given.
    pub factory_class_name: String,
    /// The member's certificate chain and private key. Required when enabled.
    pub key: Option<KeySource>,
    /// The certificates trusted to sign a peer's certificate (clients under mutual
    /// authentication, members on links this member opens). Required with mutual
    /// authentication.
    pub trust: Option<TrustSource>,
    /// `properties.protocol`: which TLS versions are spoken. Default [`TlsProtocol::Tls`].
    pub protocol: TlsProtocol,
    /// `properties.mutualAuthentication`: whether a peer must show a certificate.
    pub mutual_authentication: MutualAuthentication,
    /// `properties.ciphersuites`: IANA names, comma-separated in the file; empty = rustls'
    /// defaults. Names unknown to rustls fail the member's start.
    pub cipher_suites: Vec<String>,
}

/// Where the member's key and certificate chain come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// A PKCS#12 file holding one private key and its chain (`keyStore`, `keyStorePassword`,
    /// `keyStoreType`: only PKCS12).
    KeyStore { path: PathBuf, password: String },
    /// PEM files (`keyFile`, an unencrypted PKCS#8, PKCS#1 or SEC1 key, and
    /// `keyCertChainFile`, the chain, leaf first).
    Pem { key_file: PathBuf, cert_chain_file: PathBuf },
}

/// Where the trusted certificates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustSource {
    /// A PKCS#12 trust store (`trustStore`, `trustStorePassword`, `trustStoreType`: PKCS12).
    TrustStore { path: PathBuf, password: String },
    /// A PEM file of certificates (`trustCertCollectionFile`).
    Pem { path: PathBuf },
}

/// The TLS versions spoken, by Java's protocol names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TlsProtocol {
    /// `TLS` (Hazelcast's default): TLS 1.2 and 1.3.
    #[default]
    Tls,
    /// `TLSv1.2`: TLS 1.2 only.
    Tls12,
    /// `TLSv1.3`: TLS 1.3 only.
    Tls13,
}

/// Whether a peer must present a certificate the trust store vouches for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MutualAuthentication {
    /// Not asked for (Hazelcast's default).
    #[default]
    None,
    /// `REQUIRED`: a peer without a trusted certificate is refused.
    Required,
    /// `OPTIONAL`: asked for; a peer may present none, but one it presents must be trusted.
    Optional,
}

impl TlsProtocol {
    /// Java's protocol name (`TLS`, `TLSv1.2`, `TLSv1.3`); older versions are refused.
    pub fn parse(name: &str) -> Result<TlsProtocol, String> {
        match name {
            "TLS" => Ok(TlsProtocol::Tls),
            "TLSv1.2" => Ok(TlsProtocol::Tls12),
            "TLSv1.3" => Ok(TlsProtocol::Tls13),
            other => Err(format!("expected TLS, TLSv1.2 or TLSv1.3 (older versions are not offered), got {other:?}")),
        }
    }
}

impl MutualAuthentication {
    /// `REQUIRED` or `OPTIONAL`, in any case.
    pub fn parse(name: &str) -> Result<MutualAuthentication, String> {
        match name.to_ascii_uppercase().as_str() {
            "REQUIRED" => Ok(MutualAuthentication::Required),
            "OPTIONAL" => Ok(MutualAuthentication::Optional),
            _ => Err(format!("expected REQUIRED or OPTIONAL, got {name:?}")),
        }
    }
}

/// The key under which every TLS setting is read.
pub(crate) const SSL_KEY: &str = "hazelcast.network.ssl";

impl TlsConfig {
    /// Checks what can be checked without reading files (the member reads them at start).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let factory = self.factory_class_name.as_str();
        if self.enabled && !factory.is_empty() && factory != BASIC_FACTORY && factory != OPENSSL_FACTORY {
            let message = format!("expected {BASIC_FACTORY} or {OPENSSL_FACTORY}, got {factory:?}");
            return Err(invalid(format!("{SSL_KEY}.factory-class-name"), message));
        }
        if !self.enabled {
            return Ok(());
        }
        let properties = format!("{SSL_KEY}.properties");
        if self.key.is_none() {
            let message =
                "TLS is enabled but no key is configured: set keyStore (PKCS12) or keyFile and keyCertChainFile";
            return Err(invalid(properties, message));
        }
        if self.mutual_authentication != MutualAuthentication::None && self.trust.is_none() {
            let message = "mutual authentication needs trustStore or trustCertCollectionFile";
            return Err(invalid(format!("{properties}.mutualAuthentication"), message));
        }
        if self.cipher_suites.iter().any(|suite| suite.trim().is_empty()) {
            return Err(invalid(format!("{properties}.ciphersuites"), "expected non-empty cipher suite names"));
        }
        Ok(())
    }
}
