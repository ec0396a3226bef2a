//! TLS on the member's port (`hazelcast.network.ssl`): the material is checked at start, each
//! mistake failing it with the file's path.

mod support;

use ferrogrid_config::{KeySource, MemberConfig, MutualAuthentication, TlsConfig, TrustSource};
use ferrogrid_member::{Member, StartError};
use support::certs::{make_pki, TestPki, KEY_STORE_PASSWORD, TRUST_STORE_PASSWORD};

fn pkcs12_tls(pki: &TestPki) -> TlsConfig {
    TlsConfig {
        enabled: true,
        key: Some(KeySource::KeyStore { path: pki.member_p12.clone(), password: KEY_STORE_PASSWORD.into() }),
        trust: Some(TrustSource::TrustStore { path: pki.trust_p12.clone(), password: TRUST_STORE_PASSWORD.into() }),
        ..TlsConfig::default()
    }
}

fn pem_tls(pki: &TestPki) -> TlsConfig {
    TlsConfig {
        enabled: true,
        key: Some(KeySource::Pem {
            key_file: pki.member_key_pem.clone(),
            cert_chain_file: pki.member_chain_pem.clone(),
        }),
        trust: Some(TrustSource::Pem { path: pki.ca_pem.clone() }),
        ..TlsConfig::default()
    }
}

/// The start error for `tls`, as the operator reads it.
fn start_error(tls: TlsConfig) -> String {
    let mut config = MemberConfig::default();
    config.network.port = 15601;
    config.network.port_count = 50;
    config.metrics.file = None;
    config.metrics.http_enabled = false;
    config.network.tls = tls;
    match Member::start(config) {
        Err(error @ StartError::Tls(_)) => error.to_string(),
        Err(other) => panic!("expected a TLS start error, got {other}"),
        Ok(member) => {
            member.shutdown();
            panic!("the member started")
        }
    }
}

#[test]
fn bad_tls_material_fails_the_start_naming_the_file() {
    let pki = make_pki("bad-material");
    let path = |path: &std::path::PathBuf| path.display().to_string();
    let missing = pki.dir.join("nope.p12");
    let mut tls = pkcs12_tls(&pki);
    tls.key = Some(KeySource::KeyStore { path: missing.clone(), password: KEY_STORE_PASSWORD.into() });
    let error = start_error(tls);
    assert!(error.contains(&path(&missing)) && error.contains("cannot open"), "{error}");
    let mut tls = pkcs12_tls(&pki);
    tls.key = Some(KeySource::KeyStore { path: pki.member_p12.clone(), password: "wrong".into() });
    let error = start_error(tls);
    assert!(error.contains(&path(&pki.member_p12)) && error.contains("wrong store password"), "{error}");
    let mut tls = pkcs12_tls(&pki);
    tls.key = Some(KeySource::KeyStore { path: pki.jks.clone(), password: KEY_STORE_PASSWORD.into() });
    let error = start_error(tls);
    assert!(error.contains(&path(&pki.jks)) && error.contains("PKCS12"), "{error}");
    let mut tls = pem_tls(&pki);
    tls.key =
        Some(KeySource::Pem { key_file: pki.expired_key_pem.clone(), cert_chain_file: pki.expired_chain_pem.clone() });
    let error = start_error(tls);
    assert!(error.contains("expired"), "{error}");
    let mut tls = pem_tls(&pki);
    tls.key =
        Some(KeySource::Pem { key_file: pki.other_key_pem.clone(), cert_chain_file: pki.member_chain_pem.clone() });
    let error = start_error(tls);
    assert!(error.contains(&path(&pki.other_key_pem)) && error.contains("does not match"), "{error}");
    let mut tls = pem_tls(&pki);
    tls.mutual_authentication = MutualAuthentication::Required;
    tls.trust = Some(TrustSource::TrustStore { path: pki.trust_p12.clone(), password: "wrong".into() });
    let error = start_error(tls);
    assert!(error.contains(&path(&pki.trust_p12)) && error.contains("wrong store password"), "{error}");
    let mut tls = pem_tls(&pki);
    tls.cipher_suites = vec!["TLS_RSA_WITH_RC4_128_MD5".into()];
    let error = start_error(tls);
    assert!(error.contains("unknown cipher suite"), "{error}");
    let _ = std::fs::remove_dir_all(&pki.dir);
}

#[test]
fn good_tls_material_is_accepted() {
    let pki = make_pki("good-material");
    for mut tls in [pkcs12_tls(&pki), pem_tls(&pki)] {
        tls.mutual_authentication = MutualAuthentication::Required;
        tls.cipher_suites = vec!["TLS_AES_128_GCM_SHA256".into(), "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256".into()];
        let error = start_error(tls);
        assert!(error.contains("material is valid"), "{error}");
    }
    let _ = std::fs::remove_dir_all(&pki.dir);
}
