"""The daemon's signatures verify with tools nobody here wrote: PyJWT, joserfc, cryptography
and the openssl CLI (after converting the JWS's raw r||s signature to DER)."""
import base64
import hashlib
import json
import os
import subprocess
import tempfile

import jwt
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from joserfc import jws as joserfc_jws
from joserfc.jwk import KeySet

from conftest import USER, sign


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@pytest.fixture(scope="module")
def signed(daemon):
    client = daemon.client()
    details = [sign(client, "pay 10 EUR to bob", level=1), sign(client, "level zero payload", level=0)]
    jwks = client.call("getPublicKeys")["result"]["jwks"]
    pem = client.call("getPublicKeys", format="pem")["result"]["pem"]
    client.close()
    return details, jwks, pem


def test_pyjwt_verifies_the_daemons_signature(signed):
    details, jwks, _ = signed
    for detail in details:
        token = detail["payloadSignature"]
        kid = jwt.get_unverified_header(token)["kid"]
        key = next(jwt.PyJWK(k) for k in jwks["keys"] if k["kid"] == kid)
        claims = jwt.decode(token, key=key, algorithms=["ES256"], options={"verify_aud": False})
        assert claims["payload"] == detail["dataPayload"]
        assert claims["sub"] == USER
        assert claims["jti"] == detail["dataSignatureID"]
        assert claims["authLevel"] == detail["authLevel"]


def test_pyjwt_rejects_a_changed_payload(signed):
    details, jwks, _ = signed
    header, payload, signature = details[0]["payloadSignature"].split(".")
    claims = json.loads(b64url_decode(payload))
    claims["payload"] = "pay 1000 EUR to mallory"
    forged_payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    key = jwt.PyJWK(jwks["keys"][0])
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(f"{header}.{forged_payload}.{signature}", key=key, algorithms=["ES256"])


def test_joserfc_verifies_the_daemons_signature(signed):
    details, jwks, _ = signed
    keys = KeySet.import_key_set(jwks)
    for detail in details:
        token = joserfc_jws.deserialize_compact(detail["payloadSignature"], keys, algorithms=["ES256"])
        assert token.protected["alg"] == "ES256"
        assert token.protected["typ"] == "stepsign+jwt"
        assert json.loads(token.payload)["payload"] == detail["dataPayload"]


def test_cryptography_and_openssl_cli_verify_the_raw_signature_as_der(signed):
    details, _, pem = signed
    public_key = serialization.load_pem_public_key(pem.encode())
    for detail in details:
        header, payload, signature = detail["payloadSignature"].split(".")
        raw = b64url_decode(signature)
        assert len(raw) == 64
        der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
        signing_input = f"{header}.{payload}".encode()
        public_key.verify(der, signing_input, ec.ECDSA(hashes.SHA256()))
        with tempfile.TemporaryDirectory() as directory:
            paths = {name: os.path.join(directory, name) for name in ("pub.pem", "sig.der", "input")}
            with open(paths["pub.pem"], "w") as f:
                f.write(pem)
            with open(paths["sig.der"], "wb") as f:
                f.write(der)
            with open(paths["input"], "wb") as f:
                f.write(signing_input)
            ok = subprocess.run(["openssl", "dgst", "-sha256", "-verify", paths["pub.pem"], "-signature",
                                 paths["sig.der"], paths["input"]], capture_output=True, text=True)
            assert ok.returncode == 0 and "Verified OK" in ok.stdout, ok.stdout + ok.stderr
            with open(paths["input"], "ab") as f:
                f.write(b"x")
            bad = subprocess.run(["openssl", "dgst", "-sha256", "-verify", paths["pub.pem"], "-signature",
                                  paths["sig.der"], paths["input"]], capture_output=True, text=True)
            assert bad.returncode == 1 and bad.stdout == "Verification failure\n", bad


def test_kid_is_the_rfc7638_thumbprint(signed):
    _, jwks, _ = signed
    for key in jwks["keys"]:
        canonical = json.dumps({"crv": key["crv"], "kty": key["kty"], "x": key["x"], "y": key["y"]},
                               separators=(",", ":"), sort_keys=True).encode()
        digest = hashes.Hash(hashes.SHA256())
        digest.update(canonical)
        assert key["kid"] == base64.urlsafe_b64encode(digest.finalize()).rstrip(b"=").decode()


P256_HALF_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551 // 2


def test_signatures_carry_peer_and_are_low_s(signed):
    details, jwks, _ = signed
    for detail in details:
        header, payload, signature = detail["payloadSignature"].split(".")
        claims = json.loads(b64url_decode(payload))
        assert claims["peer"]["pid"] == os.getpid()
        assert claims["peer"]["uid"] == os.getuid()
        assert int.from_bytes(b64url_decode(signature)[32:], "big") <= P256_HALF_ORDER


def test_cryptography_verifies_a_checkpoints_p256_line_with_the_exported_jwks(daemon, signed):
    """SPEC 5.3, 5.5: a checkpoint is a C2SP signed note whose type 0x02 line (ECDSA P-256,
    key ID = the first 4 bytes of SHA-256 of the SPKI DER, an ASN.1 DER signature over the note
    text) the `cryptography` package checks with a key of the published JWKS; no JWS checkpoint
    is made any more."""
    client = daemon.client()
    reply = client.call("getCheckpoint")["result"]
    jwks = client.call("getPublicKeys")["result"]["jwks"]
    # The head: the last entry, a signature or an event (SPEC 5.4).
    head = client.call("admin.exportLedger", limit=10000)["result"]["entries"][-1]["seq"]
    client.close()
    assert set(reply) == {"checkpoint"}
    note = reply["checkpoint"]
    text, _, signatures = note.partition("\n\n")
    text += "\n"
    origin, size, root = text.splitlines()
    assert int(size) == head and len(base64.b64decode(root)) == 32
    keys = {}
    for jwk in jwks["keys"]:
        numbers = ec.EllipticCurvePublicNumbers(int.from_bytes(b64url_decode(jwk["x"]), "big"),
                                                int.from_bytes(b64url_decode(jwk["y"]), "big"), ec.SECP256R1())
        key = numbers.public_key()
        spki = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        keys[hashlib.sha256(spki).digest()[:4]] = key
    verified = 0
    for line in signatures.splitlines():
        dash, name, blob = line.split(" ")
        assert dash == "\u2014" and name == origin
        raw = base64.b64decode(blob)
        if raw[:4] in keys:
            keys[raw[:4]].verify(raw[4:], text.encode(), ec.ECDSA(hashes.SHA256()))
            verified += 1
            with pytest.raises(InvalidSignature):
                keys[raw[:4]].verify(raw[4:], f"{origin}\n{head + 1}\n{root}\n".encode(), ec.ECDSA(hashes.SHA256()))
    assert verified == 1
