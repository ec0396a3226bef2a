"""TLS with the official Python client (`ssl_enabled=True`) against ferrogrid.

Hazelcast keeps TLS in its Enterprise edition, so these run against ferrogrid only. The
certificates are made here with `cryptography`: a CA, a member certificate (PEM files, and a
PKCS#12 key store made by `cryptography`, not by ferrogrid's tests) and a client certificate.
Two members, each on 127.0.0.1 only and stopped at the end of the module: one with a PKCS#12
key store and no client certificate asked for, one with PEM files and mutual authentication
REQUIRED. The Node.js and Go clients' TLS (`tests/node/tls.js`, `tests/go/tls.go`) run against
both when scripts/test has installed them (`npm ci` in tests/node, `go build` in tests/go).
"""

import datetime
import ipaddress
import pathlib
import shutil
import ssl
import subprocess
import time

import hazelcast
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from member import Member, hazelcast_yaml

pytestmark = pytest.mark.ferrogrid_only

CLUSTER_NAME = "tls-cluster"
KEY_STORE_PASSWORD = "secret.123"


def _certificate(name, key, issuer_name, issuer_key, ca):
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(issuer_name or x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(issuer_key or key, hashes.SHA256())


def _pem_key(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """The files, by name."""
    folder = tmp_path_factory.mktemp("tls")
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("ferrogrid test CA", ca_key, None, None, ca=True)
    files = {}

    def write(name, data):
        files[name] = folder / name
        files[name].write_bytes(data)

    write("ca.pem", ca.public_bytes(serialization.Encoding.PEM))
    for name in ("member", "client"):
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _certificate(name, key, ca.subject, ca_key, ca=False)
        write(name + ".key", _pem_key(key))
        write(name + "-chain.pem", cert.public_bytes(serialization.Encoding.PEM) + ca.public_bytes(serialization.Encoding.PEM))
        write(name + ".pem", cert.public_bytes(serialization.Encoding.PEM))
        if name == "member":
            encryption = serialization.BestAvailableEncryption(KEY_STORE_PASSWORD.encode())
            write("member.p12", pkcs12.serialize_key_and_certificates(b"member", key, cert, [ca], encryption))
    return files


def _ssl_yaml(properties):
    lines = ["    ssl:", "      enabled: true", "      properties:"]
    lines += ["        %s: %s" % (key, value) for key, value in properties.items()]
    return "\n".join(lines) + "\n"


def _tls_member(tmp_path_factory, properties, probe_context):
    workdir = tmp_path_factory.mktemp("tls-member")
    proc = Member("ferrogrid", cluster_name=CLUSTER_NAME, workdir=workdir, ssl_context=probe_context)
    text = hazelcast_yaml(proc.port, CLUSTER_NAME).replace("  network:\n", "  network:\n" + _ssl_yaml(properties), 1)
    proc.config = workdir / "hazelcast.yaml"
    proc.config.write_text(text)
    proc.start(timeout=60)
    return proc


def _probe_context(pki, with_cert):
    context = ssl.create_default_context(cafile=str(pki["ca.pem"]))
    if with_cert:
        context.load_cert_chain(str(pki["client-chain.pem"]), str(pki["client.key"]))
    return context


@pytest.fixture(scope="module")
def pkcs12_member(pki, tmp_path_factory):
    properties = {"keyStore": pki["member.p12"], "keyStorePassword": KEY_STORE_PASSWORD, "keyStoreType": "PKCS12"}
    proc = _tls_member(tmp_path_factory, properties, _probe_context(pki, with_cert=False))
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def mutual_member(pki, tmp_path_factory):
    properties = {
        "keyFile": pki["member.key"],
        "keyCertChainFile": pki["member-chain.pem"],
        "trustCertCollectionFile": pki["ca.pem"],
        "mutualAuthentication": "REQUIRED",
        "protocol": "TLSv1.3",
    }
    proc = _tls_member(tmp_path_factory, properties, _probe_context(pki, with_cert=True))
    yield proc
    proc.stop()


def _client(proc, **options):
    return hazelcast.HazelcastClient(
        cluster_members=[proc.address], cluster_name=CLUSTER_NAME, cluster_connect_timeout=5, **options
    )


def test_tls_client_puts_and_gets(pkcs12_member, pki):
    client = _client(pkcs12_member, ssl_enabled=True, ssl_cafile=str(pki["ca.pem"]))
    try:
        m = client.get_map("tls-map").blocking()
        m.put("k", "v" * 100_000)
        assert m.get("k") == "v" * 100_000
        assert m.size() == 1
    finally:
        client.shutdown()


def test_plain_client_is_refused_on_a_tls_port(pkcs12_member, pki):
    with pytest.raises(Exception):
        client = _client(pkcs12_member)
        client.shutdown()
    # The member serves TLS clients as before.
    client = _client(pkcs12_member, ssl_enabled=True, ssl_cafile=str(pki["ca.pem"]))
    try:
        assert client.get_map("tls-map").blocking().get("k") == "v" * 100_000
    finally:
        client.shutdown()


def test_mutual_tls_needs_a_trusted_client_certificate(mutual_member, pki):
    # The member speaks TLSv1.3 only; the client's default is TLSv1.2.
    tls13 = hazelcast.config.SSLProtocol.TLSv1_3
    with pytest.raises(Exception):
        client = _client(mutual_member, ssl_enabled=True, ssl_cafile=str(pki["ca.pem"]), ssl_protocol=tls13)
        client.shutdown()
    with pytest.raises(Exception):
        client = _client(
            mutual_member,
            ssl_enabled=True,
            ssl_cafile=str(pki["ca.pem"]),
            ssl_certfile=str(pki["client-chain.pem"]),
            ssl_keyfile=str(pki["client.key"]),
        )
        client.shutdown()
    client = _client(
        mutual_member,
        ssl_enabled=True,
        ssl_protocol=tls13,
        ssl_cafile=str(pki["ca.pem"]),
        ssl_certfile=str(pki["client-chain.pem"]),
        ssl_keyfile=str(pki["client.key"]),
    )
    try:
        m = client.get_map("mutual-map").blocking()
        m.put("k", 1)
        assert m.get("k") == 1
    finally:
        client.shutdown()


NODE_DIR = pathlib.Path(__file__).resolve().parent.parent / "node"
# built by scripts/test (`go build` in tests/go)
GO_BIN = pathlib.Path(__file__).resolve().parent.parent.parent / "target" / "gotest"
TLS_CLIENTS = {
    "node": (["node", str(NODE_DIR / "tls.js")], "node tls: ok"),
    "go": ([str(GO_BIN), "tls"], "go tls: ok"),
}


def _installed(client):
    if client == "node":
        return shutil.which("node") is not None and (NODE_DIR / "node_modules" / "hazelcast-client").exists()
    return GO_BIN.exists()


@pytest.mark.parametrize("client", sorted(TLS_CLIENTS))
def test_official_client_over_tls(client, pkcs12_member, mutual_member, pki):
    """The Node.js and Go clients over TLS: trusting the CA; with a client certificate on the
    mutual-TLS member; refused there without one."""
    if not _installed(client):
        pytest.skip("the %s client is not installed (scripts/test installs it: npm ci in tests/node, go build in tests/go)" % client)
    program, ok = TLS_CLIENTS[client]

    def run(proc, *files):
        command = program + [proc.address, CLUSTER_NAME] + [str(f) for f in files]
        started = time.monotonic()
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
        print("%s %s: exit %d after %.1f s" % (client, [pathlib.Path(f).name for f in files], result.returncode, time.monotonic() - started))
        return result

    plain_ca = run(pkcs12_member, pki["ca.pem"])
    assert plain_ca.returncode == 0 and ok in plain_ca.stdout, plain_ca.stderr
    with_cert = run(mutual_member, pki["ca.pem"], pki["client-chain.pem"], pki["client.key"])
    assert with_cert.returncode == 0 and ok in with_cert.stdout, with_cert.stderr
    without_cert = run(mutual_member, pki["ca.pem"])
    assert without_cert.returncode != 0
