"""SPEC 5.4, a key revoked at log index R: it stays in the published JWKS with
"stepsign_revoked_at": R, and its signatures are valid only with proof of a log index below R.

A JOSE library nobody here wrote (PyJWT) shows what the JWKS alone gives a relying party: every
signature of the key verifies, the thief's forgery too, since PyJWT knows nothing of the index.
The index rule is the product's: `stepsign-verify` with the JWKS and each signature's C2SP
proof file decides, below the index, at it and above it, and without a proof."""
import base64
import json
import os
import subprocess
import tempfile
import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from conftest import BIN, CLI, Daemon, USER, PASSWORD, secret_file

VERIFY = os.path.join(BIN, "stepsign-verify")


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def revoked():
    with tempfile.TemporaryDirectory() as directory:
        daemon = Daemon(directory)
        client = daemon.client()
        assert client.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
        cli = [CLI, "--socket", daemon.socket]
        password = secret_file(directory, "pw", PASSWORD)
        # Three signatures of the key before its revocation, each with its proof file.
        signed = []
        for number in range(3):
            proof = os.path.join(directory, f"{number}.tlog-proof")
            result = run(*cli, "sign", "--user", USER, "--reason", "revocation", "--payload", f"signed before {number}",
                         "--password-file", password, "--proof-out", proof)
            assert result.returncode == 0, result.stderr
            jws = result.stdout.strip()
            jws_file = os.path.join(directory, f"{number}.jws")
            with open(jws_file, "w") as f:
                f.write(jws)
            with open(proof) as f:
                index = int(f.read().split("\n")[1].removeprefix("index "))
            signed.append({"jws": jws, "jws_file": jws_file, "proof": proof, "index": index})
        assert signed[0]["index"] < signed[1]["index"] < signed[2]["index"]
        kid = jwt.get_unverified_header(signed[0]["jws"])["kid"]
        assert all(jwt.get_unverified_header(s["jws"])["kid"] == kid for s in signed)
        # The thief's copy of the key, taken before the revocation.
        with open(os.path.join(directory, "state", "keys", kid + ".pem"), "rb") as f:
            stolen = serialization.load_pem_private_key(f.read(), password=None)
        reply = client.call("admin.revokeKey", kid=kid)
        assert reply["error"]["code"] == 0, reply
        jwks = client.call("getPublicKeys")["result"]["jwks"]
        log_keys = run(*cli, "keys", "export", "--log-keys").stdout.split()
        assert log_keys
        client.close()
        yield {"directory": directory, "signed": signed, "kid": kid, "revokedAt": reply["result"]["revokedAt"],
               "jwks": jwks, "log_keys": log_keys, "stolen": stolen}
        daemon.stop()


def keys_file(revoked, name, revoked_at=None):
    """The published JWKS in a file; with `revoked_at`, saying the key was revoked there instead."""
    jwks = json.loads(json.dumps(revoked["jwks"]))
    if revoked_at is not None:
        for entry in jwks["keys"]:
            if entry["kid"] == revoked["kid"]:
                entry["stepsign_revoked_at"] = revoked_at
    path = os.path.join(revoked["directory"], name)
    with open(path, "w") as f:
        json.dump(jwks, f)
    return path


def stepsign_verify(revoked, keys, jws_file, proof=None):
    """`stepsign-verify --json` of `jws_file` against `keys`, with `proof` and the log keys if
    given; returns (exit status, report)."""
    args = [VERIFY, "--keys", keys, "--json"]
    if proof:
        args += ["--proof", proof] + [arg for key in revoked["log_keys"] for arg in ("--log-key", key)]
    result = run(*args, jws_file)
    return result.returncode, json.loads(result.stdout)


# The order n of the P-256 group.
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def low_s(token):
    """`token` with its ES256 signature in the low-S form stepsign-verify wants (s ≤ n/2): the
    thief's tool would do the same, so the forgery is refused for its key, not for its form."""
    head, _, signature = token.rpartition(".")
    raw = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
    r, s = raw[:32], int.from_bytes(raw[32:], "big")
    if s > P256_ORDER // 2:
        s = P256_ORDER - s
    return head + "." + base64.urlsafe_b64encode(r + s.to_bytes(32, "big")).rstrip(b"=").decode()


def forged(revoked):
    """What the thief signs after the revocation with the stolen key: claims like a real
    signature's, another payload, a fresh iat."""
    claims = dict(jwt.decode(revoked["signed"][0]["jws"], options={"verify_signature": False}))
    claims.update(payload="Transfer 1,000,000 EUR to mallory", payloadLength=33, iat=int(time.time()))
    token = low_s(jwt.encode(claims, revoked["stolen"], algorithm="ES256",
                             headers={"kid": revoked["kid"], "typ": "stepsign+jwt"}))
    path = os.path.join(revoked["directory"], "forged.jws")
    with open(path, "w") as f:
        f.write(token)
    return token, path


def test_the_jwks_keeps_the_revoked_key_with_its_index(revoked):
    entry = next(k for k in revoked["jwks"]["keys"] if k["kid"] == revoked["kid"])
    assert entry["stepsign_revoked_at"] == revoked["revokedAt"] > revoked["signed"][-1]["index"]


def test_pyjwt_alone_accepts_every_signature_of_the_key_even_the_forgery(revoked):
    """The JWKS as a plain JOSE library reads it: the index is not its business."""
    entry = next(k for k in revoked["jwks"]["keys"] if k["kid"] == revoked["kid"])
    for item in revoked["signed"]:
        assert jwt.decode(item["jws"], key=jwt.PyJWK(entry), algorithms=["ES256"])["payload"].startswith("signed before")
    token, _ = forged(revoked)
    assert jwt.decode(token, key=jwt.PyJWK(entry), algorithms=["ES256"])["payload"].startswith("Transfer")


def test_stepsign_verify_accepts_each_signature_proven_below_the_index(revoked):
    keys = keys_file(revoked, "published.json")
    for item in revoked["signed"]:
        status, report = stepsign_verify(revoked, keys, item["jws_file"], item["proof"])
        assert status == 0 and report["valid"] is True, report
        assert report["kid"] == revoked["kid"] and report["logIndex"] == item["index"], report


def test_stepsign_verify_refuses_the_key_without_a_proven_index(revoked):
    keys = keys_file(revoked, "published.json")
    for item in revoked["signed"]:
        status, report = stepsign_verify(revoked, keys, item["jws_file"])
        assert status == 1 and report["valid"] is False and report["reason"] == "revoked-key", report
        assert report["message"] == (f"key {revoked['kid']} was revoked at log index {revoked['revokedAt']}: "
                                     "its signatures are valid only with proof of a log index below it"), report


def test_stepsign_verify_decides_by_the_proven_index_below_at_and_above(revoked):
    """A JWKS saying the key was revoked at the middle signature's index: the one below stays
    valid, the one at the index and the one above it are refused, each with its index."""
    below, at, above = revoked["signed"]
    middle = at["index"]
    keys = keys_file(revoked, "revoked-at-middle.json", revoked_at=middle)
    status, report = stepsign_verify(revoked, keys, below["jws_file"], below["proof"])
    assert status == 0 and report["valid"] is True and report["logIndex"] == below["index"], report
    for item in (at, above):
        status, report = stepsign_verify(revoked, keys, item["jws_file"], item["proof"])
        assert status == 1 and report["valid"] is False and report["reason"] == "revoked-key", report
        assert report["message"] == (f"key {revoked['kid']} was revoked at log index {middle}; "
                                     f"this signature is at index {item['index']}, not below it"), report
    # One past the middle: the middle one is below it now.
    keys = keys_file(revoked, "revoked-after-middle.json", revoked_at=middle + 1)
    status, report = stepsign_verify(revoked, keys, at["jws_file"], at["proof"])
    assert status == 0 and report["valid"] is True, report


def test_what_the_thief_signs_after_the_revocation_is_refused(revoked):
    """Not in the log, so no index below R can be proven: refused without a proof, and with the
    proof of a real signature (whose leaf is another JWS)."""
    _, path = forged(revoked)
    keys = keys_file(revoked, "published.json")
    status, report = stepsign_verify(revoked, keys, path)
    assert status == 1 and report["reason"] == "revoked-key", report
    status, report = stepsign_verify(revoked, keys, path, revoked["signed"][0]["proof"])
    assert status == 1 and report["reason"] == "not-in-log", report
