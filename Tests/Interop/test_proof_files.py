"""SPEC 5.5 and 8, end to end through the real CLIs: `stepsign sign --proof-out` and `stepsign
proof ID` write C2SP tlog-proof files (c2sp.org/tlog-proof@v1) that this file reads by the
specification's text alone, checks with pymerkle (the path) and `cryptography` (the log key's
Ed25519 line), and that `stepsign-verify JWS --proof FILE --log-key VKEY` accepts, and refuses
for another JWS, a tampered path, index or checkpoint, another log key, or malformed input. For a
revoked key (SPEC 5.4) the proven index decides: valid below the revocation, not at or above."""
import base64
import hashlib
import json
import os
import subprocess
import tempfile

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pymerkle import InmemoryTree

from conftest import BIN, CLI, Daemon, PASSWORD, USER, secret_file

VERIFY = os.path.join(BIN, "stepsign-verify")


def run(*args, **kwargs):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=60, **kwargs)


@pytest.fixture(scope="module")
def log():
    with tempfile.TemporaryDirectory() as directory:
        daemon = Daemon(directory)
        client = daemon.client()
        assert client.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
        cli = [CLI, "--socket", daemon.socket]
        password = secret_file(directory, "pw", PASSWORD)
        signed = []
        for number in range(5):
            proof_file = os.path.join(directory, f"{number}.tlog-proof")
            result = run(*cli, "sign", "--user", USER, "--reason", "proofs", "--payload", f"artifact {number}",
                         "--password-file", password, "--proof-out", proof_file)
            assert result.returncode == 0, result.stderr
            jws_file = os.path.join(directory, f"{number}.jws")
            with open(jws_file, "w") as f:
                f.write(result.stdout.strip())
            signed.append({"jws": result.stdout.strip(), "jws_file": jws_file, "proof": proof_file})
        keys = os.path.join(directory, "keys.json")
        with open(keys, "w") as f:
            f.write(run(*cli, "keys", "export").stdout)
        log_keys = run(*cli, "keys", "export", "--log-keys").stdout.split()
        yield {"directory": directory, "daemon": daemon, "client": client, "cli": cli, "signed": signed,
               "keys": keys, "log_keys": log_keys}
        client.close()
        daemon.stop()


def parse_proof(text):
    """(index, hashes, checkpoint note) of a tlog-proof, by the C2SP text."""
    head, _, note = text.partition("\n\n")
    lines = head.split("\n")
    assert lines[0] == "c2sp.org/tlog-proof@v1"
    assert lines[1].startswith("index ")
    return int(lines[1][6:]), [base64.b64decode(h, validate=True) for h in lines[2:]], note


def verify(log, jws_file, proof, *extra):
    log_key = [arg for key in log["log_keys"] for arg in ("--log-key", key)]
    return run(VERIFY, "--keys", log["keys"], "--json", "--proof", proof, *log_key, *extra, jws_file)


def test_the_files_follow_the_specification_and_check_with_pymerkle_and_cryptography(log):
    export = log["client"].call("admin.exportLedger")["result"]["entries"]
    tree = InmemoryTree(algorithm="sha256")
    for line in export:
        tree.append_entry(line["payloadSignature"].encode())
    ed25519 = next(k for k in log["log_keys"] if base64.b64decode(k.split("+", 2)[2])[0] == 1)
    name, _, blob = ed25519.split("+", 2)
    public = Ed25519PublicKey.from_public_bytes(base64.b64decode(blob)[1:])
    for item in log["signed"]:
        with open(item["proof"]) as f:
            index, hashes, note = parse_proof(f.read())
        body, _, signatures = note.rpartition("\n\n")
        origin, size, root = body.split("\n")[:3]
        assert origin == name
        size = int(size)
        # The entry at that index is this JWS, and pymerkle's path and root are the file's.
        assert export[index]["payloadSignature"] == item["jws"]
        assert list(tree.prove_inclusion(index + 1, size).path[1:]) == hashes
        assert tree.get_state(size) == base64.b64decode(root)
        # The log key's line verifies over the checkpoint's text.
        line = next(l for l in signatures.strip("\n").split("\n") if base64.b64decode(l.split(" ")[2])[:4]
                    == bytes.fromhex(ed25519.split("+")[1]))
        public.verify(base64.b64decode(line.split(" ")[2])[4:], (body + "\n").encode())


def test_stepsign_verify_accepts_each_proof_and_reports_where(log):
    for item in log["signed"]:
        result = verify(log, item["jws_file"], item["proof"])
        assert result.returncode == 0, result.stdout + result.stderr
        report = json.loads(result.stdout)
        index, _, _ = parse_proof(open(item["proof"]).read())
        assert report["valid"] and report["logIndex"] == index and report["treeSize"] > index
        assert report["origin"] == log["log_keys"][0].split("+")[0]


def test_stepsign_proof_writes_a_proof_of_the_log_as_it_is_now(log):
    first = log["signed"][0]
    claims = json.loads(base64.urlsafe_b64decode(first["jws"].split(".")[1] + "=="))
    out = os.path.join(log["directory"], "later.tlog-proof")
    result = run(*log["cli"], "proof", claims["jti"], "-o", out)
    assert result.returncode == 0, result.stderr
    assert verify(log, first["jws_file"], out).returncode == 0
    later, _, _ = parse_proof(open(out).read())
    earlier, _, _ = parse_proof(open(first["proof"]).read())
    assert later == earlier
    # Without -o it is printed.
    printed = run(*log["cli"], "proof", claims["jti"])
    assert printed.returncode == 0 and printed.stdout.startswith("c2sp.org/tlog-proof@v1\nindex ")
    # An unknown ID is refused, the same way as another peer's.
    unknown = run(*log["cli"], "proof", "01234567-89ab-7def-8123-456789abcdef")
    assert unknown.returncode == 1 and "getInclusionProof refused: error 4" in unknown.stderr


def test_another_jws_a_tampered_proof_or_another_log_key_is_not_in_the_log(log, tmp_path):
    first, second = log["signed"][0], log["signed"][1]
    result = verify(log, second["jws_file"], first["proof"])
    assert result.returncode == 1 and json.loads(result.stdout)["reason"] == "not-in-log"
    text = open(first["proof"]).read()
    index, hashes, note = parse_proof(text)
    _, size, root = note.split("\n")[:3]
    size = int(size)
    tampered = {
        "index": text.replace(f"index {index}\n", f"index {index + 1}\n", 1),
        "hash": text.replace(base64.b64encode(hashes[0]).decode(),
                             base64.b64encode(bytes([hashes[0][0] ^ 1]) + hashes[0][1:]).decode(), 1),
        "dropped": text.replace(base64.b64encode(hashes[-1]).decode() + "\n", "", 1),
        "size": text.replace(f"\n{size}\n{root}\n", f"\n{size + 1}\n{root}\n", 1),
    }
    for what, changed in tampered.items():
        assert changed != text, what
        path = tmp_path / f"{what}.tlog-proof"
        path.write_text(changed)
        result = verify(log, first["jws_file"], str(path))
        assert result.returncode == 1, (what, result.stdout, result.stderr)
        assert json.loads(result.stdout)["reason"] == "not-in-log", what
    # A log key of the same name but other bytes (the checkpoint is not signed by it).
    name = log["log_keys"][0].split("+")[0]
    raw = Ed25519PrivateKey.generate().public_key().public_bytes_raw()
    key_id = hashlib.sha256(name.encode() + b"\n\x01" + raw).digest()[:4].hex()
    stranger = f"{name}+{key_id}+{base64.b64encode(bytes([1]) + raw).decode()}"
    result = run(VERIFY, "--keys", log["keys"], "--json", "--proof", first["proof"], "--log-key", stranger,
                 first["jws_file"])
    assert result.returncode == 1 and json.loads(result.stdout)["reason"] == "not-in-log"


@pytest.mark.parametrize("args, message", [
    (["--proof", "PROOF"], "--proof needs at least one --log-key"),
    (["--log-key", "KEY"], "--log-key is only used with --proof"),
    (["--proof", "/nonexistent", "--log-key", "KEY"], "cannot read /nonexistent"),
    (["--proof", "PROOF", "--log-key", "not-a-key"], "neither a note verifier key"),
    (["--proof", "GARBAGE", "--log-key", "KEY"], "is not a tlog-proof"),
])
def test_bad_proof_input_exits_2(log, tmp_path, args, message):
    garbage = tmp_path / "garbage"
    garbage.write_text("c2sp.org/tlog-proof@v1\nindex 007\n\n")
    args = [{"PROOF": log["signed"][0]["proof"], "KEY": log["log_keys"][0], "GARBAGE": str(garbage)}.get(a, a)
            for a in args]
    result = run(VERIFY, "--keys", log["keys"], *args, log["signed"][0]["jws_file"])
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr


def test_a_revoked_keys_signature_is_valid_only_with_a_proof_below_the_revocation(log, tmp_path):
    first = log["signed"][0]
    index, _, _ = parse_proof(open(first["proof"]).read())
    kid = json.loads(base64.urlsafe_b64decode(first["jws"].split(".")[0] + "=="))["kid"]
    reply = log["client"].call("admin.revokeKey", kid=kid)
    assert reply["error"]["code"] == 0, reply
    revoked_at = reply["result"]["revokedAt"]
    assert revoked_at > index
    keys = tmp_path / "keys.json"
    keys.write_text(run(*log["cli"], "keys", "export").stdout)
    log_key = [arg for key in log["log_keys"] for arg in ("--log-key", key)]
    with_proof = run(VERIFY, "--keys", str(keys), "--json", "--proof", first["proof"], *log_key, first["jws_file"])
    assert with_proof.returncode == 0, with_proof.stdout
    without = run(VERIFY, "--keys", str(keys), "--json", first["jws_file"])
    assert without.returncode == 1 and json.loads(without.stdout)["reason"] == "revoked-key"
    # The same proof, read against a JWKS that says the key was revoked at or before the
    # proven index: not valid.
    jwks = json.loads(keys.read_text())
    for entry in jwks["keys"]:
        if entry["kid"] == kid:
            entry["stepsign_revoked_at"] = index
    keys.write_text(json.dumps(jwks))
    at = run(VERIFY, "--keys", str(keys), "--json", "--proof", first["proof"], *log_key, first["jws_file"])
    assert at.returncode == 1 and json.loads(at.stdout)["reason"] == "revoked-key"


def witness(name, seed):
    """A witness's Ed25519 key and its C2SP vkey (type 0x04), by the specification's text."""
    key = Ed25519PrivateKey.from_private_bytes(bytes([seed]) * 32)
    raw = key.public_key().public_bytes_raw()
    key_id = hashlib.sha256(name.encode() + b"\n\x04" + raw).digest()[:4]
    return key, key_id, f"{name}+{key_id.hex()}+{base64.b64encode(bytes([4]) + raw).decode()}"


def cosigned(proof_text, witnesses, timestamp=1_790_000_000):
    """The proof with each witness's cosignature/v1 line added to its checkpoint, made by hand
    from C2SP tlog-cosignature: Ed25519 over "cosignature/v1", "time T" and the note's text."""
    _, _, note = proof_text.partition("\n\n")
    body = note.rpartition("\n\n")[0] + "\n"
    lines = ""
    for name, (key, key_id, _) in witnesses.items():
        signature = key.sign(b"cosignature/v1\ntime %d\n" % timestamp + body.encode())
        blob = key_id + timestamp.to_bytes(8, "big") + signature
        lines += f"\u2014 {name} {base64.b64encode(blob).decode()}\n"
    return proof_text + lines


def test_a_witness_quorum_counts_only_valid_cosignatures_of_the_witnesses_given(log, tmp_path):
    first = log["signed"][0]
    w1, w2, w3 = (witness(f"witness.example/w{n}", n) for n in (1, 2, 3))
    path = tmp_path / "cosigned.tlog-proof"
    path.write_text(cosigned(open(first["proof"]).read(), {"witness.example/w1": w1, "witness.example/w2": w2}))
    log_key = [arg for key in log["log_keys"] for arg in ("--log-key", key)]

    def check(*witness_args):
        return run(VERIFY, "--keys", log["keys"], "--json", "--proof", str(path), *log_key, *witness_args,
                   first["jws_file"])

    both = check("--witness", w1[2], "--witness", w2[2])
    assert both.returncode == 0, both.stdout + both.stderr
    assert json.loads(both.stdout)["cosignedBy"] == ["witness.example/w1", "witness.example/w2"]
    two_of_three = check("--witness", w1[2], "--witness", w2[2], "--witness", w3[2], "--quorum", "2")
    assert two_of_three.returncode == 0, two_of_three.stdout
    all_three = check("--witness", w1[2], "--witness", w2[2], "--witness", w3[2])
    assert all_three.returncode == 1 and json.loads(all_three.stdout)["reason"] == "not-in-log"
    assert "quorum is 3" in json.loads(all_three.stdout)["message"]
    # A cosignature whose timestamp was changed after signing is not counted.
    text = path.read_text()
    line = text.rstrip("\n").split("\n")[-1]
    blob = bytearray(base64.b64decode(line.split(" ")[2]))
    blob[11] ^= 1
    path.write_text(text.replace(line, line.rsplit(" ", 1)[0] + " " + base64.b64encode(bytes(blob)).decode()))
    changed = check("--witness", w1[2], "--witness", w2[2])
    assert changed.returncode == 1, changed.stdout
    assert check("--witness", w1[2], "--witness", w2[2], "--quorum", "1").returncode == 0
    # Bad witness input is bad input (exit 2): a log key (type 0x01), a quorum above the keys,
    # --witness without --proof.
    assert check("--witness", log["log_keys"][0]).returncode == 2
    assert check("--witness", w1[2], "--quorum", "2").returncode == 2
    assert run(VERIFY, "--keys", log["keys"], "--witness", w1[2], first["jws_file"]).returncode == 2
