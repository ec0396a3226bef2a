//! The member's TLS material, read once at start from the files `hazelcast.network.ssl` names
//! (PKCS#12 stores or PEM files), checked, and turned into a rustls configuration.
//!
//! Every mistake a file can hold fails the start with the file's path and what to do: a missing
//! or unreadable file, a wrong store password, a Java JKS store where PKCS#12 is expected, a
//! certificate outside its validity period, a key that does not match its certificate, a
//! cipher suite rustls does not offer. Files are read whole, each at most
//! [`MAX_TLS_FILE_BYTES`].

use ferrogrid_config::{KeySource, MutualAuthentication, TlsConfig, TlsProtocol, TrustSource};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, SupportedProtocolVersion};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Largest key, certificate or store file read.
pub const MAX_TLS_FILE_BYTES: u64 = 1 << 20;

/// The first bytes of a Java JKS key store (and of a JCEKS one).
const JKS_MAGIC: [u8; 4] = [0xfe, 0xed, 0xfe, 0xed];
const JCEKS_MAGIC: [u8; 4] = [0xce, 0xce, 0xce, 0xce];

/// Why the TLS material could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file named in the configuration is missing, unreadable or wrong.
    #[error("TLS file {}: {message}", path.display())]
    File { path: PathBuf, message: String },
    /// The settings together cannot make a TLS configuration (cipher suites, versions).
    #[error("TLS settings: {0}")]
    Settings(String),
}

fn file_error(path: &Path, message: impl Into<String>) -> TlsError {
    TlsError::File { path: path.to_owned(), message: message.into() }
}

/// Everything the files hold, read and checked: the member's certificate chain (leaf first)
/// and key, and the certificates it trusts.
#[derive(Debug)]
pub struct Material {
    pub provider: Arc<CryptoProvider>,
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
    /// Configured trust (`trustStore` or `trustCertCollectionFile`), if any.
    pub trust: Option<RootCertStore>,
    /// The file the key came from, to name in later errors.
    pub key_path: PathBuf,
}

/// Reads and checks every file `tls` names.
pub fn material(tls: &TlsConfig) -> Result<Material, TlsError> {
    let provider = Arc::new(provider(&tls.cipher_suites)?);
    let key_source = tls.key.as_ref().ok_or_else(|| TlsError::Settings("no key configured".into()))?;
    let (chain, key, key_path) = load_key(key_source)?;
    check_validity(&chain[0], key_path)?;
    let signing_key = provider.key_provider.load_private_key(key.clone_key());
    let signing_key = signing_key.map_err(|error| file_error(key_path, format!("unusable private key: {error}")))?;
    let certified = rustls::sign::CertifiedKey::new(chain.clone(), signing_key);
    certified
        .keys_match()
        .map_err(|error| file_error(key_path, format!("the key does not match its certificate: {error}")))?;
    let trust = tls.trust.as_ref().map(load_trust).transpose()?;
    Ok(Material { provider, chain, key, trust, key_path: key_path.to_owned() })
}

/// The TLS versions `protocol` allows, or why none can be spoken with the suites given.
pub fn checked_versions(
    protocol: TlsProtocol,
    provider: &CryptoProvider,
) -> Result<&'static [&'static SupportedProtocolVersion], TlsError> {
    let versions = versions(protocol);
    let usable = |version: &&SupportedProtocolVersion| {
        provider.cipher_suites.iter().any(|suite| suite.version().version == version.version)
    };
    if !versions.iter().any(usable) {
        let message = "protocol and ciphersuites leave nothing to speak (no suite of the versions allowed)";
        return Err(TlsError::Settings(message.into()));
    }
    Ok(versions)
}

/// The rustls server configuration for connections accepted on the member's port.
pub fn server_config(tls: &TlsConfig, material: &Material) -> Result<Arc<ServerConfig>, TlsError> {
    let provider = &material.provider;
    let builder = ServerConfig::builder_with_provider(Arc::clone(provider))
        .with_protocol_versions(checked_versions(tls.protocol, provider)?)
        .map_err(|error| TlsError::Settings(error.to_string()))?;
    let builder = match (tls.mutual_authentication, &material.trust) {
        (MutualAuthentication::None, _) | (_, None) => builder.with_no_client_auth(),
        (mode, Some(roots)) => {
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots.clone()), Arc::clone(provider));
            let verifier =
                if mode == MutualAuthentication::Optional { verifier.allow_unauthenticated() } else { verifier };
            let verifier = verifier.build().map_err(|error| TlsError::Settings(format!("client verifier: {error}")))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let (chain, key) = (material.chain.clone(), material.key.clone_key());
    let config =
        builder.with_single_cert(chain, key).map_err(|error| file_error(&material.key_path, error.to_string()))?;
    Ok(Arc::new(config))
}

/// The ring provider, limited to the named suites (IANA names; rustls' `TLS13_` names too).
fn provider(names: &[String]) -> Result<CryptoProvider, TlsError> {
    let mut provider = rustls::crypto::ring::default_provider();
    if names.is_empty() {
        return Ok(provider);
    }
    let all = std::mem::take(&mut provider.cipher_suites);
    for name in names {
        let found = all.iter().find(|suite| suite_names(suite).iter().any(|known| known == name));
        let Some(suite) = found else {
            let offered: Vec<String> = all.iter().map(|suite| suite_names(suite)[0].clone()).collect();
            return Err(TlsError::Settings(format!("unknown cipher suite {name:?}; offered: {}", offered.join(", "))));
        };
        provider.cipher_suites.push(*suite);
    }
    Ok(provider)
}

/// A suite's IANA name first (Java's), then rustls' own when it differs.
fn suite_names(suite: &rustls::SupportedCipherSuite) -> Vec<String> {
    let own = suite.suite().as_str().map_or_else(|| format!("{:?}", suite.suite()), str::to_owned);
    match own.strip_prefix("TLS13_") {
        Some(rest) => vec![format!("TLS_{rest}"), own],
        None => vec![own],
    }
}

const TLS12_ONLY: &[&SupportedProtocolVersion] = &[&rustls::version::TLS12];
const TLS13_ONLY: &[&SupportedProtocolVersion] = &[&rustls::version::TLS13];

fn versions(protocol: TlsProtocol) -> &'static [&'static SupportedProtocolVersion] {
    match protocol {
        TlsProtocol::Tls => rustls::ALL_VERSIONS,
        TlsProtocol::Tls12 => TLS12_ONLY,
        TlsProtocol::Tls13 => TLS13_ONLY,
    }
}

type KeyMaterial<'a> = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>, &'a Path);

/// The chain (leaf first) and the private key, and the path to name in errors about them.
fn load_key(source: &KeySource) -> Result<KeyMaterial<'_>, TlsError> {
    match source {
        KeySource::KeyStore { path, password } => {
            let store = open_pkcs12(path, password)?;
            let (_, chain) = store.private_key_chain().ok_or_else(|| file_error(path, "holds no private key"))?;
            if chain.certs().is_empty() {
                return Err(file_error(path, "holds a private key without its certificate"));
            }
            let certs = chain.certs().iter().map(|cert| CertificateDer::from(cert.as_der().to_vec())).collect();
            let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(chain.key().as_der().to_vec()));
            Ok((certs, key, path))
        }
        KeySource::Pem { key_file, cert_chain_file } => {
            let chain = pem_certificates(cert_chain_file)?;
            let bytes = read_file(key_file)?;
            let key = PrivateKeyDer::from_pem_slice(&bytes)
                .map_err(|error| file_error(key_file, format!("no PEM private key: {error}")))?;
            Ok((chain, key, key_file))
        }
    }
}

/// The certificates a peer's chain must lead to.
fn load_trust(source: &TrustSource) -> Result<RootCertStore, TlsError> {
    let (certs, path) = match source {
        TrustSource::Pem { path } => (pem_certificates(path)?, path),
        TrustSource::TrustStore { path, password } => {
            let bytes = read_file(path)?;
            check_not_jks(path, &bytes)?;
            let archive = p12_keystore::Pkcs12Archive::from_pkcs12(&bytes, password)
                .map_err(|error| pkcs12_error(path, error))?;
            let certs = archive.certs.iter().map(|bag| CertificateDer::from(bag.cert.as_der().to_vec())).collect();
            (certs, path)
        }
    };
    let mut roots = RootCertStore::empty();
    for cert in certs {
        roots.add(cert).map_err(|error| file_error(path, format!("unusable trusted certificate: {error}")))?;
    }
    if roots.is_empty() {
        return Err(file_error(path, "holds no certificate"));
    }
    Ok(roots)
}

fn open_pkcs12(path: &Path, password: &str) -> Result<p12_keystore::KeyStore, TlsError> {
    let bytes = read_file(path)?;
    check_not_jks(path, &bytes)?;
    let policy = p12_keystore::Pkcs12ImportPolicy::Relaxed;
    p12_keystore::KeyStore::from_pkcs12(&bytes, password, policy).map_err(|error| pkcs12_error(path, error))
}

fn pkcs12_error(path: &Path, error: p12_keystore::error::Error) -> TlsError {
    match error {
        p12_keystore::error::Error::MacError(_) => file_error(path, "wrong store password (or a damaged file)"),
        other => file_error(path, format!("not a readable PKCS12 store: {other}")),
    }
}

fn check_not_jks(path: &Path, bytes: &[u8]) -> Result<(), TlsError> {
    if bytes.starts_with(&JKS_MAGIC) || bytes.starts_with(&JCEKS_MAGIC) {
        let message = "is a Java JKS/JCEKS key store; ferrogrid reads PKCS12 only: convert it with \
                       keytool -importkeystore -srckeystore <file> -destkeystore <file>.p12 -deststoretype PKCS12";
        return Err(file_error(path, message));
    }
    Ok(())
}

fn pem_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bytes = read_file(path)?;
    let certs: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(&bytes).collect();
    let certs = certs.map_err(|error| file_error(path, format!("bad PEM certificate: {error}")))?;
    if certs.is_empty() {
        return Err(file_error(path, "holds no PEM certificate"));
    }
    Ok(certs)
}

/// The certificate must be valid now: a member that starts with an expired one would refuse
/// every client with a message far from the cause.
fn check_validity(leaf: &CertificateDer<'_>, path: &Path) -> Result<(), TlsError> {
    let (_, cert) = x509_parser::parse_x509_certificate(leaf)
        .map_err(|error| file_error(path, format!("unreadable certificate: {error}")))?;
    let validity = cert.validity();
    let now = x509_parser::time::ASN1Time::now();
    if now > validity.not_after {
        return Err(file_error(path, format!("the certificate expired on {}", validity.not_after)));
    }
    if now < validity.not_before {
        return Err(file_error(path, format!("the certificate is not valid before {}", validity.not_before)));
    }
    Ok(())
}

fn read_file(path: &Path) -> Result<Vec<u8>, TlsError> {
    let file = std::fs::File::open(path).map_err(|error| file_error(path, format!("cannot open: {error}")))?;
    let mut bytes = Vec::new();
    let read = file.take(MAX_TLS_FILE_BYTES + 1).read_to_end(&mut bytes);
    read.map_err(|error| file_error(path, format!("cannot read: {error}")))?;
    if bytes.len() as u64 > MAX_TLS_FILE_BYTES {
        return Err(file_error(path, format!("larger than {MAX_TLS_FILE_BYTES} bytes")));
    }
    Ok(bytes)
}
