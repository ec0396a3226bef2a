//! Test certificates, made fresh in a temporary folder: a CA, a member (server) certificate and
//! a client certificate it signed, as PEM files and PKCS#12 stores, plus broken material (an
//! expired certificate, a key that matches nothing, a JKS store header).

use p12_keystore::{Certificate, KeyStore, KeyStoreEntry, PrivateKey, PrivateKeyChain};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::path::PathBuf;

pub const KEY_STORE_PASSWORD: &str = "secret.123";
pub const TRUST_STORE_PASSWORD: &str = "changeit";

/// Every file the tests use, in one fresh folder.
pub struct TestPki {
    pub dir: PathBuf,
    pub ca_pem: PathBuf,
    pub member_chain_pem: PathBuf,
    pub member_key_pem: PathBuf,
    pub member_p12: PathBuf,
    pub trust_p12: PathBuf,
    pub expired_chain_pem: PathBuf,
    pub expired_key_pem: PathBuf,
    pub other_key_pem: PathBuf,
    pub jks: PathBuf,
    pub ca_der: CertificateDer<'static>,
    pub client_chain: Vec<CertificateDer<'static>>,
    pub client_key: PrivatePkcs8KeyDer<'static>,
}

impl TestPki {
    pub fn client_key(&self) -> PrivateKeyDer<'static> {
        PrivateKeyDer::Pkcs8(self.client_key.clone_key())
    }
}

fn leaf(name: &str, issuer: &CertifiedIssuer<'_, KeyPair>, expired: bool) -> (rcgen::Certificate, KeyPair) {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
    params.distinguished_name.push(rcgen::DnType::CommonName, name);
    if expired {
        params.not_before = rcgen::date_time_ymd(2000, 1, 1);
        params.not_after = rcgen::date_time_ymd(2001, 1, 1);
    } else {
        params.not_after = rcgen::date_time_ymd(2100, 1, 1);
    }
    (params.signed_by(&key, issuer).unwrap(), key)
}

/// Makes the files in a new folder named after `test` under the system's temporary folder.
pub fn make_pki(test: &str) -> TestPki {
    let dir = std::env::temp_dir().join(format!("ferrogrid-tls-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.distinguished_name.push(rcgen::DnType::CommonName, "ferrogrid test CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.not_after = rcgen::date_time_ymd(2100, 1, 1);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let (member, member_key) = leaf("member", &ca, false);
    let (client, client_key) = leaf("client", &ca, false);
    let (expired, expired_key) = leaf("expired", &ca, true);
    let write = |name: &str, text: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let chain_pem = |cert: &rcgen::Certificate| format!("{}{}", cert.pem(), ca.pem());
    let mut key_store = KeyStore::new();
    let certs = [member.der(), ca.der()].map(|der| Certificate::from_der(der).unwrap());
    let chain = PrivateKeyChain::new("member", PrivateKey::from_der(&member_key.serialize_der()).unwrap(), certs);
    key_store.add_entry("member", KeyStoreEntry::PrivateKeyChain(chain));
    let mut trust_store = KeyStore::new();
    trust_store.add_entry("ca", KeyStoreEntry::Certificate(Certificate::from_der(ca.der()).unwrap()));
    TestPki {
        ca_pem: write("ca.pem", ca.pem().as_bytes()),
        member_chain_pem: write("member-chain.pem", chain_pem(&member).as_bytes()),
        member_key_pem: write("member.key", member_key.serialize_pem().as_bytes()),
        member_p12: write("member.p12", &key_store.writer(KEY_STORE_PASSWORD).write().unwrap()),
        trust_p12: write("trust.p12", &trust_store.writer(TRUST_STORE_PASSWORD).write().unwrap()),
        expired_chain_pem: write("expired-chain.pem", chain_pem(&expired).as_bytes()),
        expired_key_pem: write("expired.key", expired_key.serialize_pem().as_bytes()),
        other_key_pem: write("other.key", KeyPair::generate().unwrap().serialize_pem().as_bytes()),
        jks: write("member.jks", &[0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2, 0, 0, 0, 1]),
        ca_der: ca.der().clone(),
        client_chain: vec![client.der().clone(), ca.der().clone()],
        client_key: PrivatePkcs8KeyDer::from(client_key.serialize_der()),
        dir,
    }
}
