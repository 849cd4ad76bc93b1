"""SPEC 3.4, batch signing, through the real CLI and daemon, checked with software nobody here
wrote: `stepsign sign --batch FILE` steps up once for the whole file and prints one JWS a line;
PyJWT verifies every one against the published JWKS; pymerkle recomputes the manifest root the
claims carry (RFC 9162 over SHA-256 of each payload); a device key (cryptography) signs the
`stepsign-lda-v3` text and an IDV server (PyJWT) binds the `stepsign-idv-v2` text with `txn`;
each item is its own ledger entry, next to the others."""
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import jwt
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from pymerkle import InmemoryTree

from conftest import BIN, CLI, Daemon, secret_file, write_key_pair

VERIFY = os.path.join(BIN, "stepsign-verify")
USER = "rel"
PASSWORD = "Lantern-Otter-38"
ISSUER = "https://idv.example.test"


def run(*args, **kwargs):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120, **kwargs)


@pytest.fixture(scope="module")
def setup():
    with tempfile.TemporaryDirectory() as directory:
        _, idv_private, idv_public = write_key_pair(directory, "idv")
        device, device_private, device_public = write_key_pair(directory, "device")
        # The IDV "server": it reads the batch's operation text (what it shows the person),
        # checks it is a batch text for this nonce, and binds its assertion to it with txn.
        idv_command = os.path.join(directory, "idv-assert")
        shown = os.path.join(directory, "idv-shown.json")
        with open(idv_command, "w") as f:
            f.write(textwrap.dedent(f"""\
                #!{sys.executable}
                import base64, hashlib, json, sys, time, jwt
                nonce, challenge = sys.argv[1], sys.argv[2]
                text = base64.urlsafe_b64decode(challenge + "=" * (-len(challenge) % 4))
                lines = text.decode().split("\\n")
                assert lines[0] == "stepsign-idv-v2" and lines[1] == nonce, lines
                json.dump(lines, open({shown!r}, "w"))
                txn = base64.urlsafe_b64encode(hashlib.sha256(text).digest()).rstrip(b"=").decode()
                now = int(time.time())
                print(jwt.encode({{"iss": {ISSUER!r}, "sub": {USER!r}, "nonce": nonce, "txn": txn, "iat": now,
                                  "exp": now + 120, "result": "match"}}, open({idv_private!r}).read(), algorithm="ES256"))
                """))
        os.chmod(idv_command, 0o755)
        daemon = Daemon(directory, extra=f'[idv]\nissuer = "{ISSUER}"\ntrusted_keys = "{idv_public}"\n')
        admin = daemon.client()
        assert admin.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
        yield {"daemon": daemon, "dir": directory, "admin": admin, "device": device, "device_private": device_private,
               "device_public": device_public, "idv_command": idv_command, "idv_shown": shown,
               "password": secret_file(directory, "pw", PASSWORD)}
        admin.close()
        daemon.stop()


def stepsign(setup, *args):
    return run(CLI, "--socket", setup["daemon"].socket, *args, stdin=subprocess.DEVNULL)


def jwks(setup):
    return json.loads(stepsign(setup, "keys", "export").stdout)


def verified_claims(keys, token):
    kid = jwt.get_unverified_header(token)["kid"]
    key = next(jwt.PyJWK(k) for k in keys["keys"] if k["kid"] == kid)
    return jwt.decode(token, key=key, algorithms=["ES256"], options={"verify_aud": False})


def manifest_root(payloads):
    """pymerkle's RFC 9162 root over SHA-256 of each payload, standard base64."""
    tree = InmemoryTree(algorithm="sha256")
    for payload in payloads:
        tree.append_entry(hashlib.sha256(payload.encode()).digest())
    return base64.b64encode(tree.get_state()).decode()


def batch_file(directory, name, payloads, reason="release 2.0"):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        for payload in payloads:
            f.write(json.dumps({"payload": payload, "reason": reason}) + "\n")
    return path


def check_batch(setup, tokens, payloads, used):
    """Every token verifies with PyJWT, in order, with the batch claim pymerkle agrees with,
    and each is its own ledger entry, the batch's next to each other."""
    keys = jwks(setup)
    root = manifest_root(payloads)
    claims = [verified_claims(keys, token) for token in tokens]
    assert [c["payload"] for c in claims] == payloads
    batch_ids = {c["batch"]["id"] for c in claims}
    assert len(batch_ids) == 1
    for index, c in enumerate(claims):
        assert c["batch"] == {"id": c["batch"]["id"], "index": index, "count": len(payloads), "root": root}
        assert c["authenticatorUsed"] == used and c["sub"] == USER
    seqs = []
    for c in claims:
        row = setup["admin"].call("getSignature", signatureID=c["jti"])["result"]
        seqs.append(row["seq"])
    assert seqs == list(range(seqs[0], seqs[0] + len(payloads)))
    return claims


def test_one_password_for_the_whole_file(setup):
    payloads = [f"dist/pkg-{n}.tar.gz sha256:{hashlib.sha256(str(n).encode()).hexdigest()}" for n in range(25)]
    path = batch_file(setup["dir"], "release.jsonl", payloads)
    signed = stepsign(setup, "sign", "--user", USER, "--batch", path, "--password-file", setup["password"])
    assert signed.returncode == 0, signed.stderr
    tokens = signed.stdout.split()
    assert len(tokens) == 25
    check_batch(setup, tokens, payloads, "password")
    # Each line checks offline with stepsign-verify, against its own payload.
    keys = os.path.join(setup["dir"], "keys.json")
    with open(keys, "w") as f:
        json.dump(jwks(setup), f)
    for token, payload in zip(tokens[:3], payloads):
        ok = run(VERIFY, "--keys", keys, "--payload", payload, "--user", USER, "--min-level", "1", token)
        assert ok.returncode == 0, ok.stderr
        assert "batch: item " in ok.stdout and " of 25 in batch " in ok.stdout
        assert run(VERIFY, "--keys", keys, "--payload", payloads[-1], token).returncode == 1


def test_json_prints_one_details_line_per_item(setup):
    payloads = ["a", "b", "c"]
    path = batch_file(setup["dir"], "three.jsonl", payloads)
    signed = stepsign(setup, "sign", "--user", USER, "--batch", path, "--password-file", setup["password"], "--json")
    assert signed.returncode == 0, signed.stderr
    lines = [json.loads(line) for line in signed.stdout.splitlines()]
    assert [d["dataPayload"] for d in lines] == payloads
    assert [d["logIndex"] for d in lines] == list(range(lines[0]["logIndex"], lines[0]["logIndex"] + 3))


def test_the_wire_manifest_is_what_pymerkle_computes(setup):
    client = setup["daemon"].client()
    payloads = ["x" * 500, "ünïcödé ✓", "third"]
    reply = client.call("authenticateUserAndSignBatch", user=USER, authLevel=1, authenticatorType=0,
                        items=[{"payload": p, "reason": r} for p, r in zip(payloads, ["r1", "r2", "r1"])])
    assert reply["error"]["code"] == 0, reply
    event = reply["events"][0]
    assert event["event"] == "getPassword" and event["challengeMode"] == 12
    assert event["manifest"] == {"count": 3, "bytes": sum(len(p.encode()) for p in payloads),
                                 "root": manifest_root(payloads), "reasons": ["r1", "r2"]}
    done = client.call("setPassword", password=PASSWORD, challengeMode=12)
    outcome = done["events"][0]
    assert outcome["event"] == "onAuthenticateUserAndSignBatch" and outcome["status"]["code"] == 100
    assert outcome["manifest"] == event["manifest"]
    check_batch(setup, [d["payloadSignature"] for d in outcome["signatures"]], payloads, "password")
    client.close()


def test_a_bad_line_or_too_many_items_signs_nothing(setup, tmp_path):
    before = setup["admin"].call("status")["result"]["signatures"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"payload": "ok", "reason": "r"}\n{"payload": 7}\n')
    refused = stepsign(setup, "sign", "--user", USER, "--batch", str(bad), "--password-file", setup["password"])
    assert refused.returncode == 2 and "bad.jsonl:2" in refused.stderr
    too_long = batch_file(str(tmp_path), "long.jsonl", ["ok", "y" * 501])
    refused = stepsign(setup, "sign", "--user", USER, "--batch", too_long, "--password-file", setup["password"])
    assert refused.returncode == 1 and refused.stderr == (
        'stepsign: signing the batch refused: error 4: items[1]: "payload" must be at most 500 characters, got 501\n'), \
        refused.stderr
    client = setup["daemon"].client()
    reply = client.call("authenticateUserAndSignBatch", user=USER, authLevel=1, authenticatorType=0,
                        items=[{"payload": str(n), "reason": "r"} for n in range(1001)])
    assert reply["error"]["code"] == 4 and "at most 1000" in reply["error"]["message"]
    client.close()
    assert setup["admin"].call("status")["result"]["signatures"] == before


def test_a_device_key_signs_the_lda_v3_text_once_for_the_batch(setup):
    with open(setup["device_public"]) as f:
        reply = setup["admin"].call("admin.enrollDeviceKey", user=USER, publicKey=f.read(), label="ci")
    assert reply["error"]["code"] == 0, reply
    payloads = [f"firmware-{n}.bin" for n in range(4)]
    client = setup["daemon"].client()
    reply = client.call("authenticateUserAndSignBatch", user=USER, authLevel=1, authenticatorType=0,
                        items=[{"payload": p, "reason": "flash"} for p in payloads])
    event = reply["events"][0]
    assert event["event"] == "getLDASignature", event
    text = base64.urlsafe_b64decode(event["challenge"] + "=" * (-len(event["challenge"]) % 4))
    lines = text.decode().split("\n")
    assert lines[0] == "stepsign-lda-v3" and lines[2] == USER
    assert lines[3] == "4" and lines[4] == str(sum(len(p) for p in payloads)) and lines[5] == manifest_root(payloads)
    assert lines[8] == str(os.getuid()) and lines[9:] == ["flash"]
    der = setup["device"].sign(text, ec.ECDSA(hashes.SHA256()))
    r, s = decode_dss_signature(der)
    raw = base64.urlsafe_b64encode(r.to_bytes(32, "big") + s.to_bytes(32, "big")).rstrip(b"=").decode()
    done = client.call("setLDASignature", deviceKeyId=event["deviceKeys"][0], signature=raw)
    outcome = done["events"][0]
    assert outcome["event"] == "onAuthenticateUserAndSignBatch" and outcome["status"]["code"] == 100, outcome
    check_batch(setup, [d["payloadSignature"] for d in outcome["signatures"]], payloads, "lda")
    client.close()
    # The CLI answers the same with --device-key.
    path = batch_file(setup["dir"], "fw.jsonl", payloads)
    signed = stepsign(setup, "sign", "--user", USER, "--batch", path, "--device-key", setup["device_private"])
    assert signed.returncode == 0, signed.stderr
    check_batch(setup, signed.stdout.split(), payloads, "lda")


def test_the_idv_server_binds_the_idv_v2_text_of_the_batch(setup):
    payloads = ["wire 1000 EUR to DE89", "wire 2000 EUR to FR76"]
    path = batch_file(setup["dir"], "wires.jsonl", payloads, reason="payroll")
    signed = stepsign(setup, "sign", "--user", USER, "--level", "4", "--type", "1", "--batch", path,
                      "--idv-command", setup["idv_command"])
    assert signed.returncode == 0, signed.stderr
    check_batch(setup, signed.stdout.split(), payloads, "idv-biometric")
    with open(setup["idv_shown"]) as f:
        shown = json.load(f)
    assert shown[2] == USER and shown[3] == "2" and shown[5] == manifest_root(payloads) and shown[9:] == ["payroll"]
