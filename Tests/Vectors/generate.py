#!/usr/bin/env python3
"""Known-answer vectors for stepsign's signature and ledger chain, computed without stepsign.

Writes `known-answer.json` beside this script (or, with `--check`, recomputes it and exits 1
if the stored file differs). Everything is derived here from SPEC.md with Python's `hashlib`,
`base64`, `json` and the `cryptography` package, never with stepsign's own code:

- the key: the P-256 private scalar is SHA-256("stepsign known-answer vector key 1") read as
  a big-endian integer (mod n), so the key is the same on every run;
- the protected header: `{"alg":"ES256","kid":<kid>,"typ":"stepsign+jwt"}` (SPEC §2), kid the
  RFC 7638 thumbprint (SHA-256 of `{"crv","kty","x","y"}` in that order, base64url);
- the claims: SPEC §2's members in SPEC order, compact JSON, strings escaped as RFC 8259 with
  the shortest form stepsign chose (`\\"`, `\\\\`, `\\n`, `\\r`, `\\t`; other control characters
  `\\u00xx` in lowercase hex, `\\b` and `\\f` included; everything else as UTF-8);
- the signature: ECDSA P-256/SHA-256 with deterministic nonces (RFC 6979, so the file is
  reproducible), r||s raw 32+32 bytes, s normalised to the low half (stepsign refuses high S);
- the chain: entry hash = SHA-256(previous hash || SHA-256(JWS)), genesis previous hash 32
  zero bytes, hashes in lowercase hex (SPEC §5).

Run: python3 Tests/Vectors/generate.py [--check]   (needs cryptography >= 43: `pip install cryptography`)
"""
import base64
import hashlib
import json
import os
import sys

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

HERE = os.path.dirname(os.path.abspath(__file__))
OUTPUT = os.path.join(HERE, "known-answer.json")
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def json_string(text: str) -> str:
    """RFC 8259 string with stepsign's escaping choice (see the module comment)."""
    short = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    out = []
    for ch in text:
        if ch in short:
            out.append(short[ch])
        elif ord(ch) < 0x20:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def json_object(members) -> str:
    """Compact JSON object, members in the order given; values str, int or nested lists of pairs."""
    parts = []
    for key, value in members:
        if isinstance(value, str):
            encoded = json_string(value)
        elif isinstance(value, bool):
            raise TypeError("no booleans in stepsign claims")
        elif isinstance(value, int):
            encoded = str(value)
        else:
            encoded = json_object(value)
        parts.append(json_string(key) + ":" + encoded)
    return "{" + ",".join(parts) + "}"


def the_key() -> ec.EllipticCurvePrivateKey:
    scalar = int.from_bytes(hashlib.sha256(b"stepsign known-answer vector key 1").digest(), "big") % P256_ORDER
    return ec.derive_private_key(scalar, ec.SECP256R1())


def thumbprint(public: ec.EllipticCurvePublicKey) -> str:
    numbers = public.public_numbers()
    x, y = b64url(numbers.x.to_bytes(32, "big")), b64url(numbers.y.to_bytes(32, "big"))
    canonical = '{"crv":"P-256","kty":"EC","x":"%s","y":"%s"}' % (x, y)
    return b64url(hashlib.sha256(canonical.encode("ascii")).digest())


def uuid7(unix_ms: int, rand_a: int, rand_b: int) -> str:
    """RFC 9562 UUIDv7 text from a millisecond time and fixed 'random' bits."""
    value = (unix_ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | (rand_a & 0xFFF) << 64 | 0b10 << 62 | (rand_b & ((1 << 62) - 1))
    h = "%032x" % value
    return "-".join([h[0:8], h[8:12], h[12:16], h[16:20], h[20:32]])


def claims(iss, sub, jti, iat, payload, reason, auth_level, authenticator_type, used, peer):
    # payloadLength counts extended grapheme clusters; these payloads have no combining
    # sequences and no CR LF, so that is their code point count.
    return [
        ("iss", iss), ("sub", sub), ("jti", jti), ("iat", iat), ("payload", payload),
        ("payloadLength", len(payload)), ("reason", reason), ("authLevel", auth_level),
        ("authenticatorType", authenticator_type), ("authenticatorUsed", used),
        ("peer", [("uid", peer[0]), ("pid", peer[1]), ("comm", peer[2])]),
    ]


def sign(key, signing_input: bytes) -> bytes:
    try:
        algorithm = ec.ECDSA(hashes.SHA256(), deterministic_signing=True)
    except TypeError:
        sys.exit("generate.py needs cryptography >= 43 (RFC 6979 deterministic ECDSA); pip install -U cryptography")
    der = key.sign(signing_input, algorithm)
    r, s = decode_dss_signature(der)
    if s > P256_ORDER // 2:
        s = P256_ORDER - s
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def make_jws(key, kid, members):
    header = json_object([("alg", "ES256"), ("kid", kid), ("typ", "stepsign+jwt")]).encode("utf-8")
    payload = json_object(members).encode("utf-8")
    # Cross-check the hand-made JSON with Python's own parser.
    assert json.loads(payload)["payload"] == dict(members)["payload"]
    signing_input = (b64url(header) + "." + b64url(payload)).encode("ascii")
    signature = sign(key, signing_input)
    return header, payload, signing_input, signature, signing_input.decode("ascii") + "." + b64url(signature)


def build():
    key = the_key()
    public = key.public_key()
    kid = thumbprint(public)
    peer = (1000, 4242, "stepsign")

    iat = 1_750_000_000
    jti = uuid7(iat * 1000 + 123, 0xABC, 0x0123456789ABCDEF)
    payload_text = 'pay 100 € to "Bob"\\n\ttab\nline\u0001\u0008\u000c\u001f é 👍 </script>'
    members = claims("stepsign-test", "alice", jti, iat, payload_text, "transfer #42", 1, 0, "password", peer)
    header, payload, signing_input, signature, compact = make_jws(key, kid, members)

    chain = []
    previous = bytes(32)
    for seq in (1, 2, 3):
        entry_iat = iat + 60 * seq
        entry_members = claims("stepsign-test", ["alice", "bob", "alice"][seq - 1],
                               uuid7(entry_iat * 1000 + seq, seq, seq * 0x1111), entry_iat,
                               "ledger entry %d" % seq, "chain vector", seq - 1, 0,
                               ["none", "password", "password"][seq - 1], peer)
        jws = make_jws(key, kid, entry_members)[4]
        digest = hashlib.sha256(jws.encode("ascii")).digest()
        entry_hash = hashlib.sha256(previous + digest).digest()
        chain.append({
            "seq": seq,
            "jws": jws,
            "jwsSHA256": digest.hex(),
            "prevHash": previous.hex(),
            "entryHash": entry_hash.hex(),
        })
        previous = entry_hash

    return {
        "description": "stepsign known-answer vectors (SPEC §2, §5), made by Tests/Vectors/generate.py "
                       "with Python hashlib/cryptography, not by stepsign. Byte strings are UTF-8 text "
                       "where the name ends in JSON or Input, otherwise hex or base64url as named.",
        "key": {
            "privateKeyPKCS8PEM": key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                    serialization.NoEncryption()).decode("ascii"),
            "publicKeySPKIPEM": public.public_bytes(serialization.Encoding.PEM,
                                                    serialization.PublicFormat.SubjectPublicKeyInfo).decode("ascii"),
            "kid": kid,
        },
        "signature": {
            "inputs": {
                "iss": "stepsign-test", "sub": "alice", "jti": jti, "iat": iat, "payload": payload_text,
                "payloadLength": len(payload_text), "reason": "transfer #42", "authLevel": 1,
                "authenticatorType": 0, "authenticatorUsed": "password",
                "peer": {"uid": peer[0], "pid": peer[1], "comm": peer[2]},
            },
            "headerJSON": header.decode("utf-8"),
            "payloadJSON": payload.decode("utf-8"),
            "signingInput": signing_input.decode("ascii"),
            "signatureHex": signature.hex(),
            "jws": compact,
        },
        "chain": {
            "genesisPrevHash": bytes(32).hex(),
            "entries": chain,
        },
    }


def main():
    text = json.dumps(build(), indent=2, ensure_ascii=False) + "\n"
    if sys.argv[1:] == ["--check"]:
        with open(OUTPUT, encoding="utf-8") as stored:
            if stored.read() != text:
                sys.exit("%s differs from what generate.py computes" % OUTPUT)
        print("known-answer.json matches")
        return
    with open(OUTPUT, "w", encoding="utf-8") as out:
        out.write(text)
    print("wrote", OUTPUT)


if __name__ == "__main__":
    main()
