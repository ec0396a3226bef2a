//! The client side of TLS on links this member opens to other members.
//!
//! A member presents its own certificate (the other side may require it) and checks the other
//! member's chain against the configured trust — or, with none configured, against the root
//! of its own chain (members whose certificates share a CA, or share one certificate, trust
//! each other). Host names are not checked: members are reached by the addresses of
//! `member-list`, which certificates seldom name (as Hazelcast, whose `validateIdentity` is off
//! by default).

use crate::net::tls_files::{checked_versions, Material, TlsError};
use ferrogrid_config::TlsConfig;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, Error, RootCertStore, SignatureScheme};
use std::sync::Arc;

/// The rustls client configuration for links to other members.
pub fn client_config(tls: &TlsConfig, material: &Material) -> Result<Arc<ClientConfig>, TlsError> {
    let provider = &material.provider;
    let roots = match &material.trust {
        Some(roots) => roots.clone(),
        None => {
            let mut roots = RootCertStore::empty();
            let root = material.chain.last().expect("a checked chain has a certificate");
            roots.add(root.clone()).map_err(|error| TlsError::Settings(format!("own root certificate: {error}")))?;
            roots
        }
    };
    let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), Arc::clone(provider))
        .build()
        .map_err(|error| TlsError::Settings(format!("member verifier: {error}")))?;
    let config = ClientConfig::builder_with_provider(Arc::clone(provider))
        .with_protocol_versions(checked_versions(tls.protocol, provider)?)
        .map_err(|error| TlsError::Settings(error.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(MemberVerifier { inner }))
        .with_client_auth_cert(material.chain.clone(), material.key.clone_key())
        .map_err(|error| TlsError::Settings(format!("member certificate: {error}")))?;
    Ok(Arc::new(config))
}

/// Checks a member's chain and signatures as WebPKI does, all but the name.
#[derive(Debug)]
struct MemberVerifier {
    inner: Arc<WebPkiServerVerifier>,
}

impl ServerCertVerifier for MemberVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        match self.inner.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls12_signature(message, cert, signature)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls13_signature(message, cert, signature)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}
