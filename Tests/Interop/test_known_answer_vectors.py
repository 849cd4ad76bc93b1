"""Tests/Vectors/known-answer.json read by a standard JOSE library (PyJWT) and hashlib.

The Swift suites check that stepsign writes and accepts these bytes; here another
implementation checks the same file, and generate.py reproduces it exactly.
"""
import base64
import hashlib
import json
import os
import subprocess
import sys

import jwt
import pytest

VECTORS_DIR = os.path.join(os.path.dirname(__file__), "..", "Vectors")
with open(os.path.join(VECTORS_DIR, "known-answer.json"), encoding="utf-8") as f:
    VECTORS = json.load(f)
KEY = VECTORS["key"]["publicKeySPKIPEM"]


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_generator_reproduces_the_file():
    result = subprocess.run([sys.executable, os.path.join(VECTORS_DIR, "generate.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_pyjwt_verifies_the_fixed_jws_with_the_exact_header_and_claims():
    signature = VECTORS["signature"]
    claims = jwt.decode(signature["jws"], KEY, algorithms=["ES256"])
    assert claims == signature["inputs"]
    assert jwt.get_unverified_header(signature["jws"]) == {
        "alg": "ES256", "kid": VECTORS["key"]["kid"], "typ": "stepsign+jwt"}
    header, payload, sig = signature["jws"].split(".")
    assert f"{header}.{payload}" == signature["signingInput"]
    assert b64url_decode(header) == signature["headerJSON"].encode("utf-8")
    assert b64url_decode(payload) == signature["payloadJSON"].encode("utf-8")
    assert b64url_decode(sig).hex() == signature["signatureHex"]


@pytest.mark.parametrize("part,bit", [(1, 0), (2, 0), (2, 511)])
def test_pyjwt_refuses_one_changed_bit(part, bit):
    parts = VECTORS["signature"]["jws"].split(".")
    raw = bytearray(b64url_decode(parts[part]))
    raw[bit // 8] ^= 1 << (bit % 8)
    parts[part] = base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()
    with pytest.raises(jwt.InvalidTokenError):
        jwt.decode(".".join(parts), KEY, algorithms=["ES256"])


def test_chain_hashes_from_the_genesis_hash():
    previous = bytes.fromhex(VECTORS["chain"]["genesisPrevHash"])
    assert previous == bytes(32)
    for seq, entry in enumerate(VECTORS["chain"]["entries"], start=1):
        assert entry["seq"] == seq
        digest = hashlib.sha256(entry["jws"].encode("ascii")).digest()
        assert digest.hex() == entry["jwsSHA256"]
        assert entry["prevHash"] == previous.hex()
        previous = hashlib.sha256(previous + digest).digest()
        assert entry["entryHash"] == previous.hex()
        jwt.decode(entry["jws"], KEY, algorithms=["ES256"])
