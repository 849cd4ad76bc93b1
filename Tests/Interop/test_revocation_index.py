"""SPEC 5.4 with a JOSE library nobody here wrote: a key revoked at log index R stays in the
published JWKS with "stepsign_revoked_at": R. PyJWT verifies the signature itself; the index
rule (valid only at a log index below R) is the few lines a verifier adds beside it."""
import json
import os
import tempfile
import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from conftest import Daemon, USER, PASSWORD, sign


def verify_with_index(token, jwks, log_index):
    """PyJWT's decode, then SPEC 5.4's rule: a revoked key's signature needs an index below R."""
    kid = jwt.get_unverified_header(token)["kid"]
    entry = next(k for k in jwks["keys"] if k["kid"] == kid)
    claims = jwt.decode(token, key=jwt.PyJWK(entry), algorithms=["ES256"])
    revoked_at = entry.get("stepsign_revoked_at")
    if revoked_at is not None and (log_index is None or log_index >= revoked_at):
        raise jwt.InvalidSignatureError(f"key {kid} was revoked at log index {revoked_at}")
    return claims


@pytest.fixture(scope="module")
def revoked():
    with tempfile.TemporaryDirectory() as directory:
        daemon = Daemon(directory)
        client = daemon.client()
        assert client.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
        before = sign(client, "signed before the revocation", level=1)
        row = client.call("getSignature", signatureID=before["dataSignatureID"])["result"]
        kid = jwt.get_unverified_header(before["payloadSignature"])["kid"]
        # The thief's copy of the key, taken before the revocation.
        with open(os.path.join(directory, "state", "keys", kid + ".pem"), "rb") as f:
            stolen = serialization.load_pem_private_key(f.read(), password=None)
        reply = client.call("admin.revokeKey", kid=kid)
        assert reply["error"]["code"] == 0, reply
        jwks = client.call("getPublicKeys")["result"]["jwks"]
        client.close()
        yield {"before": before, "index": row["seq"] - 1, "kid": kid, "revokedAt": reply["result"]["revokedAt"],
               "jwks": jwks, "stolen": stolen}
        daemon.stop()


def test_the_jwks_keeps_the_revoked_key_with_its_index(revoked):
    entry = next(k for k in revoked["jwks"]["keys"] if k["kid"] == revoked["kid"])
    assert entry["stepsign_revoked_at"] == revoked["revokedAt"] > revoked["index"]


def test_a_signature_below_the_index_stays_valid(revoked):
    claims = verify_with_index(revoked["before"]["payloadSignature"], revoked["jwks"], revoked["index"])
    assert claims["payload"] == "signed before the revocation"


def test_without_an_index_or_at_one_not_below_it_the_signature_is_refused(revoked):
    token = revoked["before"]["payloadSignature"]
    for index in (None, revoked["revokedAt"], revoked["revokedAt"] + 5):
        with pytest.raises(jwt.InvalidSignatureError):
            verify_with_index(token, revoked["jwks"], index)


def test_what_the_thief_signs_after_the_revocation_is_refused(revoked):
    """PyJWT alone accepts the forgery (the key is in the JWKS); the index rule does not, at any
    index the thief can prove (an entry at or after R, or none)."""
    claims = dict(jwt.decode(revoked["before"]["payloadSignature"], options={"verify_signature": False}))
    claims.update(payload="Transfer 1,000,000 EUR to mallory", payloadLength=33, iat=int(time.time()))
    forged = jwt.encode(claims, revoked["stolen"], algorithm="ES256",
                        headers={"kid": revoked["kid"], "typ": "stepsign+jwt"})
    entry = next(k for k in revoked["jwks"]["keys"] if k["kid"] == revoked["kid"])
    assert jwt.decode(forged, key=jwt.PyJWK(entry), algorithms=["ES256"])["payload"].startswith("Transfer")
    for index in (None, revoked["revokedAt"], revoked["revokedAt"] + 1):
        with pytest.raises(jwt.InvalidSignatureError):
            verify_with_index(forged, revoked["jwks"], index)


def test_stepsign_verify_refuses_a_revoked_keys_signature_without_a_proven_index(revoked, tmp_path):
    from conftest import BIN
    import subprocess
    keys = tmp_path / "jwks.json"
    keys.write_text(json.dumps(revoked["jwks"]))
    result = subprocess.run([os.path.join(BIN, "stepsign-verify"), "--keys", str(keys), "--json",
                             revoked["before"]["payloadSignature"]], capture_output=True, text=True)
    report = json.loads(result.stdout)
    assert result.returncode == 1 and report["reason"] == "revoked-key", result.stdout
    assert f"revoked at log index {revoked['revokedAt']}" in report["message"]
