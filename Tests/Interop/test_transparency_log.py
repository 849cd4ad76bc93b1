"""SPEC 5.5 against software nobody here wrote: pymerkle (pinned in scripts/setup) computes, from
the entries' JWS bytes alone, the same roots and inclusion paths the daemon's stored tree gives,
and the C2SP checkpoints' Ed25519 and ECDSA signatures check with `cryptography` as
golang.org/x/mod/sumdb/note and transparency-dev's witness define them."""
import base64
import hashlib
import os
import sys
import tempfile

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pymerkle import InmemoryTree

from conftest import Daemon, USER

# RFC 9162's verification algorithms, written out from the RFC once, beside the pymerkle vectors.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Vectors"))
from generate_merkle import rfc9162_consistent, rfc9162_root  # noqa: E402

ENTRIES = 300


@pytest.fixture(scope="module")
def log():
    """A daemon with 300 level-0 signatures, and every entry's JWS in log order."""
    with tempfile.TemporaryDirectory() as directory:
        daemon = Daemon(directory)
        client = daemon.client()
        assert client.call("admin.addUser", user=USER, password="Quartz-Zebra-77")["error"]["code"] == 0
        signed = []
        for number in range(ENTRIES):
            reply = client.call("authenticateUserAndSignData", user=USER, payload=f"entry {number}",
                                reason="interop", authLevel=0, authenticatorType=0)
            signed.append(reply["events"][-1]["details"])
        export = client.call("admin.exportLedger")
        yield daemon, client, signed, export
        client.close()
        daemon.stop()


def parse_note(text):
    """(body, [(name, key ID, signature)]) of a signed note."""
    body, _, block = text.rpartition("\n\n")
    signatures = []
    for line in block.strip("\n").split("\n"):
        assert line.startswith("\u2014 ")
        name, blob = line[2:].split(" ")
        raw = base64.b64decode(blob, validate=True)
        signatures.append((name, raw[:4], raw[4:]))
    return body + "\n", signatures


def check_note(text, log_keys):
    """Verifies both signatures of a checkpoint with cryptography; returns (origin, size, root)."""
    body, signatures = parse_note(text)
    checked = set()
    for vkey in log_keys:
        name, key_id_hex, blob = vkey.split("+", 2)
        raw = base64.b64decode(blob)
        key_type, key = raw[0], raw[1:]
        if key_type == 1:  # Ed25519: key ID = SHA-256(name || 0x0A || 0x01 || key)[:4]
            key_id = hashlib.sha256(name.encode() + b"\n\x01" + key).digest()[:4]
            verify = lambda sig: Ed25519PublicKey.from_public_bytes(key).verify(sig, body.encode())
        else:  # ECDSA P-256: key ID = SHA-256(SPKI DER)[:4], a DER signature over SHA-256 of the text
            key_id = hashlib.sha256(key).digest()[:4]
            public = serialization.load_der_public_key(key)
            verify = lambda sig, public=public: public.verify(sig, body.encode(), ec.ECDSA(hashes.SHA256()))
        assert key_id.hex() == key_id_hex
        for sig_name, sig_id, sig in signatures:
            if sig_name == name and sig_id == key_id:
                verify(sig)
                checked.add(key_type)
    assert checked == {1, 2}, "the log key and the signing key both signed"
    origin, size, root = body.rstrip("\n").split("\n")[:3]
    return origin, int(size), base64.b64decode(root)


def pymerkle_tree(export):
    """pymerkle's tree of the exported entries' JWS bytes, in log order (events included)."""
    tree = InmemoryTree(algorithm="sha256")
    for line in export["result"]["entries"]:
        tree.append_entry(line["payloadSignature"].encode())
    return tree


def test_roots_and_inclusion_paths_match_pymerkle(log):
    _, client, signed, export = log
    log_keys = client.call("getPublicKeys")["result"]["logKeys"]
    tree = pymerkle_tree(export)
    for number, details in enumerate(signed):
        proof = client.call("getInclusionProof", signatureID=details["dataSignatureID"])["result"]
        origin, size, root = check_note(proof["checkpoint"], log_keys)
        assert origin.startswith("stepsign.") and origin.endswith("/interop")
        assert size == tree.get_size() and root == tree.get_state(size)
        index = proof["logIndex"]
        assert index == details["logIndex"] == size - ENTRIES + number
        theirs = tree.prove_inclusion(index + 1, size).path  # 1-based; the leaf's own hash first
        leaf = hashlib.sha256(b"\x00" + details["payloadSignature"].encode()).digest()
        assert theirs[0] == leaf
        ours = [base64.b64decode(h) for h in proof["hashes"]]
        assert ours == list(theirs[1:]), index
        assert rfc9162_root(leaf, index, size, ours) == root


def test_consistency_proofs_from_every_size_join_pymerkles_roots(log):
    """From every older size (1 to the log's 302, powers of two included) the daemon's
    consistency proof joins pymerkle's root of that size to the signed root, by RFC 9162's
    verification written out here."""
    _, client, _, export = log
    tree = pymerkle_tree(export)
    reply = client.call("getConsistencyProof", fromSize=0)["result"]
    _, size, root = check_note(reply["checkpoint"], client.call("getPublicKeys")["result"]["logKeys"])
    assert size == tree.get_size() and tree.get_state(size) == root
    for old in range(1, size + 1):
        proof = client.call("getConsistencyProof", fromSize=old)["result"]
        hashes_ = [base64.b64decode(h) for h in proof["hashes"]]
        assert rfc9162_consistent(old, size, tree.get_state(old), root, hashes_), old


def test_a_tampered_checkpoint_signature_is_refused_by_cryptography(log):
    _, client, signed, _ = log
    proof = client.call("getInclusionProof", signatureID=signed[-1]["dataSignatureID"])["result"]
    body, signatures = parse_note(proof["checkpoint"])
    name, key_id, sig = signatures[0]
    raw_keys = [base64.b64decode(k.split("+", 2)[2]) for k in client.call("getPublicKeys")["result"]["logKeys"]]
    key = next(raw[1:] for raw in raw_keys if raw[0] == 1)
    with pytest.raises(InvalidSignature):
        Ed25519PublicKey.from_public_bytes(key).verify(sig, body.replace("\n", "\n ", 1).encode())
