"""stepsign-verify against JWS made elsewhere (PyJWT) and forged ones, and the CLI end to end."""
import base64
import json
import os
import subprocess
import tempfile

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from conftest import BIN, PASSWORD, USER, secret_file

VERIFY = os.path.join(BIN, "stepsign-verify")
CLI = os.path.join(BIN, "stepsign")


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def thumbprint(public_key):
    numbers = public_key.public_numbers()
    canonical = json.dumps({"crv": "P-256", "kty": "EC", "x": b64url(numbers.x.to_bytes(32, "big")),
                            "y": b64url(numbers.y.to_bytes(32, "big"))}, separators=(",", ":"))
    from cryptography.hazmat.primitives import hashes
    digest = hashes.Hash(hashes.SHA256())
    digest.update(canonical.encode())
    return b64url(digest.finalize())


P256_HALF_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551 // 2


def encode_low_s(claims, key, headers):
    """jwt.encode until the signature is low-S (s <= n/2): stepsign-verify accepts only that
    form (SPEC 5.3), and cryptography makes either form, at random."""
    while True:
        token = jwt.encode(claims, key, algorithm="ES256", headers=headers)
        signature = base64.urlsafe_b64decode(token.split(".")[2] + "==")
        if int.from_bytes(signature[32:], "big") <= P256_HALF_ORDER:
            return token


@pytest.fixture(scope="module")
def trusted():
    """A P-256 key made by cryptography, its PEM in a keys file, and JWS made by PyJWT."""
    key = ec.generate_private_key(ec.SECP256R1())
    holder = tempfile.TemporaryDirectory(prefix="stepsign-tests-verify-")
    directory = holder.name
    keys_file = os.path.join(directory, "keys.pem")
    pem = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    with open(keys_file, "wb") as f:
        f.write(pem)
    kid = thumbprint(key.public_key())
    claims = {"iss": "elsewhere", "sub": "carol", "jti": "0190a0b0-0000-7000-8000-000000000000", "iat": 1700000000,
              "payload": "made by PyJWT", "payloadLength": 13, "reason": "interop", "authLevel": 1,
              "authenticatorType": 0, "authenticatorUsed": "password"}
    token = encode_low_s(claims, key, {"kid": kid, "typ": "stepsign+jwt"})
    yield key, keys_file, kid, claims, token, pem
    holder.cleanup()


def verify(*args, stdin=None):
    return subprocess.run([VERIFY, *args], input=stdin, capture_output=True, text=True)


def test_accepts_a_pyjwt_signature_with_a_trusted_key(trusted):
    _, keys_file, _, claims, token, _ = trusted
    result = verify("--keys", keys_file, "--payload", claims["payload"], "--user", "carol", "--json", token)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["valid"] is True


def test_reads_the_jws_from_stdin(trusted):
    _, keys_file, _, _, token, _ = trusted
    assert verify("--keys", keys_file, "-", stdin=token + "\n").returncode == 0


def test_rejects_a_changed_payload(trusted):
    _, keys_file, _, _, token, _ = trusted
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["payload"] = "made by mallory"
    forged = f"{header}.{b64url(json.dumps(claims).encode())}.{signature}"
    assert verify("--keys", keys_file, forged).returncode == 1


def test_rejects_payload_and_user_mismatch(trusted):
    _, keys_file, _, _, token, _ = trusted
    assert verify("--keys", keys_file, "--payload", "something else", token).returncode == 1
    assert verify("--keys", keys_file, "--user", "mallory", token).returncode == 1


def test_rejects_alg_none(trusted):
    _, keys_file, kid, claims, _, _ = trusted
    header = b64url(json.dumps({"alg": "none", "kid": kid, "typ": "stepsign+jwt"}).encode())
    token = f"{header}.{b64url(json.dumps(claims).encode())}."
    assert verify("--keys", keys_file, token).returncode == 1


def test_rejects_hs256_signed_with_the_public_key_as_secret(trusted):
    _, keys_file, kid, claims, _, pem = trusted
    import hashlib
    import hmac
    header = b64url(json.dumps({"alg": "HS256", "kid": kid, "typ": "stepsign+jwt"}).encode())
    body = b64url(json.dumps(claims).encode())
    mac = hmac.new(pem, f"{header}.{body}".encode(), hashlib.sha256).digest()
    assert verify("--keys", keys_file, f"{header}.{body}.{b64url(mac)}").returncode == 1


def test_rejects_an_unknown_kid(trusted):
    key, keys_file, _, claims, _, _ = trusted
    token = jwt.encode(claims, key, algorithm="ES256", headers={"kid": "not-a-known-kid", "typ": "stepsign+jwt"})
    assert verify("--keys", keys_file, token).returncode == 1


def test_rejects_a_key_it_does_not_trust(trusted):
    _, keys_file, kid, claims, _, _ = trusted
    other = ec.generate_private_key(ec.SECP256R1())
    token = jwt.encode(claims, other, algorithm="ES256", headers={"kid": kid, "typ": "stepsign+jwt"})
    assert verify("--keys", keys_file, token).returncode == 1


@pytest.mark.parametrize("garbage", ["", "not a jws", "a.b", "a.b.c.d", "!!!.???.###"])
def test_bad_input_exits_2(trusted, garbage):
    _, keys_file, _, _, _, _ = trusted
    assert verify("--keys", keys_file, garbage).returncode == 2


def test_unreadable_keys_file_exits_2(trusted):
    _, _, _, _, token, _ = trusted
    assert verify("--keys", "/nonexistent/keys.json", token).returncode == 2


def feed_endlessly(args, limit=64 << 20):
    """Runs stepsign-verify ARGS with stdin from a writer that never stops by itself: 64 KiB
    chunks until the verifier closes the pipe (or `limit` bytes). Returns the exit status,
    stderr and how much was written."""
    process = subprocess.Popen([VERIFY, *args], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, bufsize=0)
    chunk, written = b"a" * 65536, 0
    try:
        while written < limit:
            written += process.stdin.write(chunk)
    except BrokenPipeError:
        pass
    finally:
        try:
            process.stdin.close()
        except BrokenPipeError:
            pass
    stderr = process.stderr.read().decode()
    return process.wait(timeout=120), stderr, written


@pytest.mark.parametrize("args,message", [
    (["--keys", "KEYS", "-"], "stdin is larger than 1 MiB; refused"),
    (["--keys", "KEYS", "--json"], "stdin is larger than 1 MiB; refused"),
    (["--keys", "-", "TOKEN"], "stdin is larger than 1 MiB; refused"),
    (["--keys", "KEYS", "--payload-file", "-", "TOKEN"], "stdin is larger than 1 MiB; refused"),
    (["ledger", "-", "--keys", "KEYS"], "stdin line 1 is longer than 2 MiB; refused"),
])
def test_endless_stdin_is_refused_after_a_bounded_read(trusted, args, message):
    """Input is read up to its limit and no further: an endless stdin costs a few MiB, not
    all of it (it was read to the end before the 1 MiB check)."""
    _, keys_file, _, _, token, _ = trusted
    args = [{"KEYS": keys_file, "TOKEN": token}.get(a, a) for a in args]
    status, stderr, written = feed_endlessly(args)
    assert written <= 8 << 20, f"the verifier read {written >> 20} MiB before it answered: {stderr}"
    assert status == 2, stderr
    assert message in stderr


def test_cli_sign_then_offline_verify(daemon):
    """The demo path: stepsign sign with --password-file, keys export, stepsign-verify."""
    with tempfile.TemporaryDirectory() as directory:
        password_file = secret_file(directory, "password", PASSWORD)
        env = dict(os.environ, STEPSIGN_SOCKET=daemon.socket)
        signed = subprocess.run([CLI, "sign", "--user", USER, "--level", "1", "--reason", "cli",
                                 "--payload", "from the CLI", "--password-file", password_file],
                                capture_output=True, text=True, env=env)
        assert signed.returncode == 0, signed.stderr
        token = signed.stdout.strip()
        jwks_file = os.path.join(directory, "jwks.json")
        exported = subprocess.run([CLI, "--socket", daemon.socket, "keys", "export", "--jwks"],
                                  capture_output=True, text=True)
        assert exported.returncode == 0, exported.stderr
        with open(jwks_file, "w") as f:
            f.write(exported.stdout)
        assert verify("--keys", jwks_file, "--payload", "from the CLI", "--user", USER, token).returncode == 0
        assert verify("--keys", jwks_file, "--payload", "from the CLl", token).returncode == 1
        assert PASSWORD not in signed.stdout + signed.stderr
