"""SPEC 5.7, a FIDO2 security key as the level-1 device factor, against a real stepsignd: the
test is the authenticator, built from python-fido2's structures (COSE key, authenticator data)
and a P-256 key of `cryptography`, so what the daemon checks was made by code nobody here wrote.
Enrolled with its COSE ES256 key and credential ID, a key answers a step-up with
authenticatorData and a signature over authenticatorData || SHA-256(LDA v3 text); every field
and flag tampered, the counter replayed or lower, another challenge's hash, and an answer used
twice are refused (status 102, one attempt each). With fido2_attestation = "direct" a packed
attestation (certificates made here with `cryptography`) must chain to the configured roots."""
import base64
import hashlib
import json
import os
import subprocess
import tempfile

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from fido2 import cbor
from fido2.cose import ES256
from fido2.webauthn import AuthenticatorData

from conftest import Daemon, PASSWORD, cli

USER = "fido"
RP_ID = "stepsign.test"
UP = AuthenticatorData.FLAG.UP
UV = AuthenticatorData.FLAG.UV


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Authenticator:
    """A software FIDO2 authenticator holding one ES256 credential for RP_ID."""

    def __init__(self):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.credential_id = os.urandom(32)
        self.counter = 0

    def cose(self):
        return cbor.encode(ES256.from_cryptography_key(self.key.public_key()))

    def assertion(self, client_data_hash, counter=None, flags=UP | UV, rp_id=RP_ID):
        """authenticatorData and the DER signature over authenticatorData || clientDataHash."""
        if counter is None:
            self.counter += 1
            counter = self.counter
        data = bytes(AuthenticatorData.create(hashlib.sha256(rp_id.encode()).digest(), flags, counter))
        return data, self.key.sign(data + client_data_hash, ec.ECDSA(hashes.SHA256()))


@pytest.fixture(scope="module")
def setup():
    with tempfile.TemporaryDirectory() as directory:
        daemon = Daemon(directory, extra=f'max_attempts = 100\n[lda]\nfido2_rp_id = "{RP_ID}"\n')
        admin = daemon.client()
        assert admin.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
        device = Authenticator()
        reply = admin.call("admin.enrollDeviceKey", user=USER, label="security key",
                           fido2={"publicKey": b64url(device.cose()), "credentialId": b64url(device.credential_id)})
        assert reply["error"]["code"] == 0, reply
        admin.close()
        yield {"daemon": daemon, "device": device, "kid": reply["result"]["deviceKeyId"], "dir": directory}
        daemon.stop()


def open_step_up(client, payload="release 1.2.3"):
    reply = client.call("authenticateUserAndSignData", user=USER, payload=payload, reason="Deploy release",
                        authLevel=1, authenticatorType=0)
    assert reply["error"]["code"] == 0, reply
    event = reply["events"][-1]
    assert event["event"] == "getLDASignature", event
    return event


def answer(client, kid, data, signature):
    return client.call("setLDASignature", deviceKeyId=kid, authenticatorData=b64url(data), signature=b64url(signature))


def client_data_hash(event):
    text = unb64url(event["challenge"])
    # One payload's challenge is the v2 text, a batch's the v3 text: the hash is of the text sent.
    assert text.startswith(b"stepsign-lda-v2\n")
    return hashlib.sha256(text).digest()


def signs(reply):
    event = reply["events"][-1]
    return event["event"] == "onAuthenticateUserAndSignData" and event["status"]["code"] == 100


def refused(reply, attempts_before):
    """The answer was refused as the spec says: a new challenge, status 102, one attempt less."""
    assert reply["error"]["code"] == 0, reply
    event = reply["events"][-1]
    assert event["event"] == "getLDASignature", event
    assert event["status"]["code"] == 102, event
    assert event["attemptsLeft"] == attempts_before - 1, event
    return event


def test_an_enrolled_security_key_answers_a_step_up(setup):
    client = setup["daemon"].client()
    event = open_step_up(client)
    assert setup["kid"] in event["deviceKeys"]
    reply = answer(client, setup["kid"], *setup["device"].assertion(client_data_hash(event)))
    assert signs(reply), reply
    assert reply["events"][-1]["details"]["authenticatorUsed"] == "lda"
    client.close()


def tampered_cases(device, cdh, other_cdh):
    def flipped_signature():
        data, signature = device.assertion(cdh)
        return data, signature[:-1] + bytes([signature[-1] ^ 1])

    def flipped_data():
        data, signature = device.assertion(cdh)
        # The counter's last byte: the flags stay UP|UV, the signature no longer covers it.
        return data[:-1] + bytes([data[-1] ^ 1]), signature

    return {
        "signature tampered": flipped_signature,
        "authenticatorData tampered": flipped_data,
        "wrong RP ID hash": lambda: device.assertion(cdh, rp_id="evil.example"),
        "UP missing": lambda: device.assertion(cdh, flags=UV),
        "UV missing": lambda: device.assertion(cdh, flags=UP),
        "clientDataHash of another challenge": lambda: device.assertion(other_cdh),
        "counter replayed": lambda: device.assertion(cdh, counter=device.counter),
        "counter lower": lambda: device.assertion(cdh, counter=device.counter - 1),
    }


@pytest.mark.parametrize("case", ["signature tampered", "authenticatorData tampered", "wrong RP ID hash", "UP missing",
                                  "UV missing", "clientDataHash of another challenge", "counter replayed",
                                  "counter lower"])
def test_a_bad_assertion_is_refused_and_costs_an_attempt(setup, case):
    device = setup["device"]
    client = setup["daemon"].client()
    # A valid answer first, so the stored counter is above 1 and "lower" means something.
    assert signs(answer(client, setup["kid"], *device.assertion(client_data_hash(open_step_up(client)))))
    other = client_data_hash(open_step_up(setup["daemon"].client(), payload="another payload"))
    event = open_step_up(client)
    data, signature = tampered_cases(device, client_data_hash(event), other)[case]()
    retry = refused(answer(client, setup["kid"], data, signature), event["attemptsLeft"])
    # The key still works on the fresh challenge with a counter that grew.
    assert signs(answer(client, setup["kid"], *device.assertion(client_data_hash(retry))))
    client.close()


def test_a_counter_that_does_not_grow_is_logged_as_a_possible_clone(setup):
    device = setup["device"]
    client = setup["daemon"].client()
    event = open_step_up(client)
    refused(answer(client, setup["kid"], *device.assertion(client_data_hash(event), counter=device.counter)),
            event["attemptsLeft"])
    client.close()
    with open(os.path.join(setup["dir"], "stepsignd.log"), "rb") as log:
        lines = [line for line in log.read().decode(errors="replace").splitlines() if "possible clone" in line]
    assert lines and all("critical" in line for line in lines), lines


def test_an_answer_used_once_is_refused_the_second_time(setup):
    device = setup["device"]
    first = setup["daemon"].client()
    event = open_step_up(first)
    data, signature = device.assertion(client_data_hash(event))
    assert signs(answer(first, setup["kid"], data, signature))
    # The same bytes again, on a fresh challenge in another session.
    second = setup["daemon"].client()
    again = open_step_up(second)
    refused(answer(second, setup["kid"], data, signature), again["attemptsLeft"])
    first.close()
    second.close()


def test_a_plain_ES256_signature_does_not_answer_for_a_security_key(setup):
    device = setup["device"]
    client = setup["daemon"].client()
    event = open_step_up(client)
    raw = device.key.sign(unb64url(event["challenge"]), ec.ECDSA(hashes.SHA256()))
    refused(client.call("setLDASignature", deviceKeyId=setup["kid"], signature=b64url(raw)), event["attemptsLeft"])
    client.close()


def test_the_cli_says_clearly_when_no_security_key_is_attached(setup, tmp_path):
    # No FIDO2 device here (a real one cannot be attached in CI): exit 69 (EX_UNAVAILABLE),
    # a message that says what to do, nothing enrolled and no credential file left behind.
    credential = str(tmp_path / "key.fido2")
    enrolled = cli(setup["daemon"], "device", "enroll", "--user", USER, "--fido2", "--credential-file", credential,
                   stdin=subprocess.DEVNULL)
    assert enrolled.returncode == 69, enrolled
    assert "no FIDO2 security key found: plug one in and try again" in enrolled.stderr
    assert not os.path.exists(credential)
    # A step-up answered with a credential file asks the key, which is not there.
    with open(credential, "w") as f:
        json.dump({"fido2": {"deviceKeyId": setup["kid"], "credentialId": b64url(setup["device"].credential_id),
                             "rpId": RP_ID}}, f)
    os.chmod(credential, 0o600)
    signed = cli(setup["daemon"], "sign", "--user", USER, "--level", "1", "--reason", "r", "--payload", "p",
                 "--device-key", credential, stdin=subprocess.DEVNULL)
    assert signed.returncode == 69, signed
    assert "stepsign-lda-v2" in signed.stderr and "no FIDO2 security key found" in signed.stderr


def test_an_enrolment_that_is_not_a_cose_es256_key_is_refused_with_4(setup):
    from cryptography.hazmat.primitives.asymmetric import ed25519
    from fido2.cose import EdDSA
    admin = setup["daemon"].client()
    good = Authenticator().cose()
    cases = {
        "EdDSA key": cbor.encode(EdDSA.from_cryptography_key(ed25519.Ed25519PrivateKey.generate().public_key())),
        "cut short": good[:-1],
        "trailing byte": good + b"\x00",
        "not a map": cbor.encode([1, 2, 3]),
        "point not on the curve": good[:-1] + bytes([good[-1] ^ 1]),
    }
    for name, cose in cases.items():
        reply = admin.call("admin.enrollDeviceKey", user=USER, fido2={"publicKey": b64url(cose), "credentialId": "AA"})
        assert reply["error"]["code"] == 4, (name, reply)
    for fido2 in ({"publicKey": b64url(good)}, {"publicKey": b64url(good), "credentialId": ""},
                  {"publicKey": b64url(good), "credentialId": "AA", "extra": 1}):
        assert admin.call("admin.enrollDeviceKey", user=USER, fido2=fido2)["error"]["code"] == 4, fido2
    both = admin.call("admin.enrollDeviceKey", user=USER, publicKey="x", fido2={"publicKey": b64url(good), "credentialId": "AA"})
    assert both["error"]["code"] == 4
    admin.close()


def certificate(subject, key, issuer=None, issuer_key=None, ca=False):
    from cryptography import x509
    from cryptography.x509.oid import NameOID
    import datetime
    now = datetime.datetime.now(datetime.timezone.utc)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject),
                      x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "Authenticator Attestation")])
    return (x509.CertificateBuilder().subject_name(name).issuer_name(issuer.subject if issuer else name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
            .sign(issuer_key or key, hashes.SHA256()))


def packed_attestation(device, attestation_key, chain, rp_id=RP_ID, credential_id=None):
    """A packed attestation of `device`'s credential, in the fields enrollDeviceKey takes."""
    from cryptography.hazmat.primitives.serialization import Encoding
    from fido2.webauthn import AttestedCredentialData, Aaguid
    credential = AttestedCredentialData.create(Aaguid(bytes(16)), credential_id or device.credential_id,
                                               ES256.from_cryptography_key(device.key.public_key()))
    data = bytes(AuthenticatorData.create(hashlib.sha256(rp_id.encode()).digest(), UP | UV | AuthenticatorData.FLAG.AT,
                                          0, credential))
    client_data_hash = os.urandom(32)
    return {"fmt": "packed", "authData": b64url(data), "clientDataHash": b64url(client_data_hash),
            "sig": b64url(attestation_key.sign(data + client_data_hash, ec.ECDSA(hashes.SHA256()))),
            "x5c": [b64url(c.public_bytes(Encoding.DER)) for c in chain]}


def test_direct_attestation_must_chain_to_the_configured_roots(tmp_path):
    from cryptography.hazmat.primitives.serialization import Encoding
    root_key, other_key, leaf_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    root = certificate("Test FIDO Root", root_key, ca=True)
    other_root = certificate("Other Root", other_key, ca=True)
    leaf = certificate("Test Key Attestation", leaf_key, issuer=root, issuer_key=root_key)
    roots = str(tmp_path / "roots.pem")
    with open(roots, "wb") as f:
        f.write(root.public_bytes(Encoding.PEM))
    daemon = Daemon(str(tmp_path), extra=f'[lda]\nfido2_rp_id = "{RP_ID}"\nfido2_attestation = "direct"\n'
                                         f'fido2_attestation_roots = "{roots}"\n')
    try:
        admin = daemon.client()
        assert admin.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0

        def enroll(device, attestation):
            fido2 = {"publicKey": b64url(device.cose()), "credentialId": b64url(device.credential_id)}
            if attestation is not None:
                fido2["attestation"] = attestation
            return admin.call("admin.enrollDeviceKey", user=USER, fido2=fido2)["error"]["code"]

        device = Authenticator()
        bad_signature = packed_attestation(device, leaf_key, [leaf])
        bad_signature["sig"] = b64url(leaf_key.sign(b"other", ec.ECDSA(hashes.SHA256())))
        refused = {
            "no attestation": None,
            "a chain to another root": packed_attestation(device, other_key, [other_root]),
            "self attestation": dict(packed_attestation(device, leaf_key, [leaf]), x5c=[]),
            "signature over other bytes": bad_signature,
            "signed by another key than the certificate's": packed_attestation(device, other_key, [leaf]),
            "another relying party": packed_attestation(device, leaf_key, [leaf], rp_id="evil.example"),
            "another credential": packed_attestation(device, leaf_key, [leaf], credential_id=os.urandom(32)),
        }
        for name, attestation in refused.items():
            assert enroll(device, attestation) == 4, name
        assert enroll(device, packed_attestation(device, leaf_key, [leaf])) == 0
        admin.close()
    finally:
        daemon.stop()
