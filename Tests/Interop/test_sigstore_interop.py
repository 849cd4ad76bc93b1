"""SPEC 5.5 against sigstore-python (PyPI `sigstore`, pinned to 4.5.1 in scripts/setup), the
verifier Sigstore's Python clients use on Rekor's log: its RFC 6962 inclusion check
(`sigstore._internal.merkle.verify_merkle_inclusion`) accepts the daemon's inclusion proofs, and
its signed-note checkpoint check (`sigstore._internal.rekor.checkpoint.verify_checkpoint`) accepts
the daemon's C2SP checkpoints by their ECDSA P-256 (type 0x02) signature line, signed as Rekor
signs its checkpoints; both refuse a flipped proof hash, a wrong index or tree size, another key
and a checkpoint altered after signing.

PRIVATE API. Both checks live in `sigstore._internal` and take sigstore's `TransparencyLogEntry`
(whose constructor is marked @private) and `Keyring`: sigstore has no public call that checks a
bare log entry (its `Verifier` wants a whole bundle: a Fulcio certificate or a key, the artifact,
the entry). So sigstore is pinned to exactly 4.5.1 in scripts/setup (it pins the
sigstore-models it builds on); a new version may move or change these, and this file with it.

What is built from the daemon's replies, and nothing more:
- the entry: sigstore-models' `TransparencyLogEntry` in protobuf-JSON form, as a Sigstore
  bundle's `verificationMaterial.tlogEntries[]` carries one, wrapped in sigstore's own class.
  `canonicalizedBody` is the entry's JWS bytes (sigstore hashes the leaf as SHA-256(0x00 ‖ body),
  which is the daemon's leaf); `logIndex`, `treeSize`, `hashes` are getInclusionProof's;
  `rootHash` is the root line of the checkpoint that came with it (the daemon's reply carries the
  root only there; sigstore compares the path's root to `rootHash` and `rootHash` to the signed
  checkpoint's, so the two checks chain the leaf to the signed root); `checkpoint.envelope` is
  the checkpoint text verbatim; `logId.keyId` is SHA-256 of the 0x02 key's SPKI DER (RFC 6962
  3.2's log ID, sigstore's `key_id()`), whose first 4 bytes sigstore matches against the
  signature lines' key IDs. `kindVersion` is a label neither check reads; no `integratedTime` or
  `inclusionPromise` (there is no SET to check).
- the keyring: `Keyring([PublicKey(rawBytes = the 0x02 logKey's SPKI DER,
  keyDetails = PKIX_ECDSA_P256_SHA_256)])`, the form of a trusted root's `tlogs[].publicKey`.

The Ed25519 (0x01) line is not sigstore's to check: its C2SP key ID, SHA-256(name ‖ 0x0A ‖ 0x01
‖ key)[:4], is not an RFC 6962 log ID (test_transparency_log.py checks it). What sigstore 4.5.1
leaves out, this file checks beside it with sigstore's own note parser: verify_checkpoint
compares the checkpoint's root to `rootHash` but not its size to `treeSize`, nor its origin."""
import base64
import hashlib
import json
import re
import tempfile

import pytest
import sigstore
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from sigstore._internal.merkle import verify_merkle_inclusion
from sigstore._internal.rekor.checkpoint import SignedCheckpoint, verify_checkpoint
from sigstore._internal.trust import Keyring
from sigstore._utils import key_id
from sigstore.errors import VerificationError
from sigstore.models import TransparencyLogEntry
from sigstore_models.common.v1 import PublicKey
from sigstore_models.rekor.v1 import TransparencyLogEntry as EntryMessage

from conftest import Daemon, USER

SIGNATURES = 40
# Tree sizes the proofs are asked for, around powers of two; None: the whole log (the daemon's
# start and addUser events plus the 40 signatures, past 33). Asked in this order: the daemon
# refuses a size below its latest checkpoint's.
SIZES = (4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, None)


def test_the_pinned_version_is_the_one_this_file_was_written_against():
    assert sigstore.__version__ == "4.5.1", "private API: re-read sigstore._internal, then re-pin"


def indexes(size):
    """The leaves whose proofs are checked in a tree of `size`: the first two, the middle, the
    last two."""
    return sorted({0, 1, size // 2, size - 2, size - 1})


@pytest.fixture(scope="module")
def log():
    """A daemon with 40 level-0 signatures; every entry's JWS in log order (events included, from
    the export: the admin may have their proofs too), its P-256 note key, and the proofs of
    `indexes(size)` for every size of SIZES, asked for up front in growing order."""
    with tempfile.TemporaryDirectory() as directory:
        daemon = Daemon(directory)
        client = daemon.client()
        assert client.call("admin.addUser", user=USER, password="Quartz-Zebra-77")["error"]["code"] == 0
        for number in range(SIGNATURES):
            reply = client.call("authenticateUserAndSignData", user=USER, payload=f"entry {number}",
                                reason="interop", authLevel=0, authenticatorType=0)
            assert reply["events"][-1]["status"]["code"] == 100, reply
        entries = client.call("admin.exportLedger")["result"]["entries"]
        assert [line["seq"] for line in entries] == list(range(1, len(entries) + 1))
        assert len(entries) > SIZES[-2]
        keys = client.call("getPublicKeys", format="pem")["result"]
        proofs = {}
        for size in SIZES:
            for index in indexes(size or len(entries)):
                # The whole log by its size: without treeSize the daemon answers from its newest
                # checkpoint that covers the entry (SPEC 5.5), here one of 33.
                reply = client.call("getInclusionProof", signatureID=entries[index]["signatureID"],
                                    treeSize=size or len(entries))
                assert reply["error"]["code"] == 0, (index, size, reply)
                proofs[index, size] = reply["result"]
        yield entries, keys, proofs
        client.close()
        daemon.stop()


def p256_note_key(keys):
    """The SPKI DER of the 0x02 note verifier key in getPublicKeys' logKeys."""
    found = []
    for vkey in keys["logKeys"]:
        name, key_id_hex, blob = vkey.split("+", 2)
        raw = base64.b64decode(blob, validate=True)
        if raw[0] == 0x02:
            found.append((key_id_hex, raw[1:]))
    assert len(found) == 1, keys["logKeys"]
    key_id_hex, spki = found[0]
    assert hashlib.sha256(spki).digest()[:4].hex() == key_id_hex
    return spki


def keyring(*spkis):
    """sigstore's keyring of P-256 keys, each as a trusted root's tlogs[].publicKey says it."""
    return Keyring([PublicKey.from_json(json.dumps({"rawBytes": base64.b64encode(spki).decode(),
                                                    "keyDetails": "PKIX_ECDSA_P256_SHA_256"}))
                    for spki in spkis])


def note_lines(block, spki):
    """(the Ed25519 line, the 0x02 line) of a checkpoint's signature block, told apart by key ID."""
    lines = block.rstrip("\n").split("\n")
    assert len(lines) == 2 and all(line.startswith("\u2014 ") for line in lines), block
    p256 = [line for line in lines
            if base64.b64decode(line.split(" ")[2])[:4] == hashlib.sha256(spki).digest()[:4]]
    assert len(p256) == 1, block
    (ed25519,) = [line for line in lines if line != p256[0]]
    assert len(base64.b64decode(ed25519.split(" ")[2])) == 4 + 64
    return ed25519, p256[0]


def checkpoint_root(note):
    """The root hash line of a checkpoint (its third line), decoded."""
    return base64.b64decode(note.split("\n")[2], validate=True)


def tlog_entry(jws, proof, log_spki, *, index=None, size=None, hashes=None, checkpoint=None, root=None):
    """sigstore's TransparencyLogEntry for the entry `jws` with the daemon's `proof` (a
    getInclusionProof result), any field overridden by a keyword (bytes for `hashes` and
    `root`), under the log ID of the P-256 key `log_spki`."""
    checkpoint = proof["checkpoint"] if checkpoint is None else checkpoint
    b64 = lambda raw: base64.b64encode(raw).decode()
    message = {
        "logIndex": str(proof["logIndex"] if index is None else index),
        "logId": {"keyId": b64(hashlib.sha256(log_spki).digest())},
        "kindVersion": {"kind": "stepsign-jws", "version": "0.0.1"},
        "inclusionProof": {
            "logIndex": str(proof["logIndex"] if index is None else index),
            "rootHash": b64(checkpoint_root(checkpoint) if root is None else root),
            "treeSize": str(proof["treeSize"] if size is None else size),
            "hashes": proof["hashes"] if hashes is None else [b64(h) for h in hashes],
            "checkpoint": {"envelope": checkpoint},
        },
        "canonicalizedBody": b64(jws.encode() if isinstance(jws, str) else jws),
    }
    return TransparencyLogEntry(EntryMessage.from_json(json.dumps(message)))


def sigstore_accepts(entry, ring):
    """Both of sigstore's checks, as TransparencyLogEntry._verify runs them (it adds the SET,
    which these entries have none of)."""
    verify_merkle_inclusion(entry)
    verify_checkpoint(ring, entry)


def test_the_key_sigstore_is_given_is_the_daemons_signing_key(log):
    """The 0x02 note key is the daemon's ECDSA P-256 signing key (the one getPublicKeys' PEM
    carries), and its C2SP key ID is the first 4 bytes of the RFC 6962 log ID sigstore derives."""
    _, keys, _ = log
    spki = p256_note_key(keys)
    public = serialization.load_der_public_key(spki)
    assert isinstance(public, ec.EllipticCurvePublicKey) and public.curve.name == "secp256r1"
    pems = re.findall(r"-----BEGIN PUBLIC KEY-----.*?-----END PUBLIC KEY-----\n", keys["pem"], re.S)
    published = [serialization.load_pem_public_key(pem.encode()).public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo) for pem in pems]
    assert spki in published
    assert key_id(public) == hashlib.sha256(spki).digest()


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"size={size or 'whole'}")
def test_sigstore_accepts_our_inclusion_proofs_and_checkpoints(log, size):
    entries, keys, proofs = log
    spki = p256_note_key(keys)
    ring = keyring(spki)
    tree_size = size or len(entries)
    for index in indexes(tree_size):
        proof = proofs[index, size]
        assert (proof["logIndex"], proof["treeSize"]) == (index, tree_size)
        sigstore_accepts(tlog_entry(entries[index]["payloadSignature"], proof, spki), ring)
        # What verify_checkpoint leaves out, with sigstore's parser: the signed size is the
        # proof's, and the note is this daemon's (one origin, both lines under its name).
        signed = SignedCheckpoint.from_text(proof["checkpoint"])
        assert signed.checkpoint.log_size == tree_size
        assert signed.checkpoint.log_hash == checkpoint_root(proof["checkpoint"]).hex()
        assert signed.checkpoint.other_content == []
        origin = signed.checkpoint.origin
        assert origin.startswith("stepsign.") and origin.endswith("/interop")
        assert [s.name for s in signed.signed_note.signatures] == [origin, origin]


def sample(log):
    """A few proofs the negative cases start from: first, middle and last leaves, in trees whose
    size is a power of two, one past it, and the whole log."""
    entries, keys, proofs = log
    whole = len(entries)
    chosen = [(0, 16), (8, 16), (15, 16), (0, 17), (16, 17), (1, None), (whole // 2, None), (whole - 1, None)]
    return [(entries[i]["payloadSignature"], proofs[i, s]) for i, s in chosen]


def test_a_flipped_bit_in_any_proof_hash_is_refused(log):
    _, keys, _ = log
    spki = p256_note_key(keys)
    for jws, proof in sample(log):
        hashes = [base64.b64decode(h) for h in proof["hashes"]]
        assert hashes
        for position in range(len(hashes)):
            for bit in (0, 7 + 8 * 31):  # the first byte's low bit, the last byte's high bit
                flipped = list(hashes)
                value = bytearray(flipped[position])
                value[bit // 8] ^= 1 << (bit % 8)
                flipped[position] = bytes(value)
                with pytest.raises(VerificationError, match="invalid root hash"):
                    verify_merkle_inclusion(tlog_entry(jws, proof, spki, hashes=flipped))
        # A hash dropped or one too many: the wrong length for the path.
        for wrong in (hashes[:-1], hashes + [hashes[-1]]):
            with pytest.raises(VerificationError, match="wrong size"):
                verify_merkle_inclusion(tlog_entry(jws, proof, spki, hashes=wrong))


def test_another_leaf_is_refused(log):
    """The proof of one entry does not prove another's JWS, nor its own with a byte changed."""
    entries, keys, _ = log
    spki = p256_note_key(keys)
    for jws, proof in sample(log):
        other = entries[(proof["logIndex"] + 1) % proof["treeSize"]]["payloadSignature"]
        changed = bytearray(jws.encode())
        changed[-1] ^= 0x01
        for body in (other, bytes(changed)):
            with pytest.raises(VerificationError, match="invalid root hash"):
                verify_merkle_inclusion(tlog_entry(body, proof, spki))


def test_a_wrong_index_is_refused(log):
    _, keys, _ = log
    spki = p256_note_key(keys)
    for jws, proof in sample(log):
        index, size = proof["logIndex"], proof["treeSize"]
        for wrong in {index - 1, index + 1, index ^ 2, size - 1 - index} - {index}:
            if 0 <= wrong < size:
                with pytest.raises(VerificationError):
                    verify_merkle_inclusion(tlog_entry(jws, proof, spki, index=wrong))


def test_a_wrong_tree_size_is_refused(log):
    """Claimed with the same (true) signed root, a tree size that changes the shape of the leaf's
    path (its length, or where it meets the tree's right border) is refused by sigstore's inclusion
    check alone."""
    entries, keys, proofs = log
    spki = p256_note_key(keys)
    whole = len(entries)
    cases = [(15, 16, 17), (15, 16, 32), (16, 17, 18), (16, 17, 33), (8, 16, 9), (8, 16, 12),
             (0, 16, 8), (0, 16, 17), (whole - 1, None, whole + 1), (whole - 1, None, 2 * whole)]
    for index, size, wrong in cases:
        with pytest.raises(VerificationError):
            verify_merkle_inclusion(tlog_entry(entries[index]["payloadSignature"], proofs[index, size], spki,
                                               size=wrong))


def test_a_tree_size_that_keeps_the_paths_shape_is_caught_only_by_the_signed_size(log):
    """An RFC 6962/9162 inclusion path names its tree size only through the root it reaches:
    leaf 0's path in a tree of 17 is as valid for a claimed 18..32, leaf 8's in 16 for 15 (RFC 9162
    2.1.3.2 accepts them too). sigstore 4.5.1's verify_checkpoint then compares roots, not sizes,
    so both of its checks pass; the signed size, from sigstore's own parser, is what tells, and
    test_sigstore_accepts_our_inclusion_proofs_and_checkpoints compares it. Not a fault of the
    daemon's output; asserted so that a sigstore that starts comparing sizes is noticed."""
    entries, keys, proofs = log
    spki = p256_note_key(keys)
    for index, size, wrong in [(0, 17, 18), (0, 17, 32), (8, 16, 15)]:
        proof = proofs[index, size]
        entry = tlog_entry(entries[index]["payloadSignature"], proof, spki, size=wrong)
        sigstore_accepts(entry, keyring(spki))
        assert SignedCheckpoint.from_text(proof["checkpoint"]).checkpoint.log_size == size != wrong


def test_another_key_is_refused(log):
    entries, keys, proofs = log
    spki = p256_note_key(keys)
    other = ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    for jws, proof in sample(log):
        # Our log ID (it picks the 0x02 line), another key in the keyring: a bad signature.
        with pytest.raises(VerificationError, match="invalid signature"):
            verify_checkpoint(keyring(other), tlog_entry(jws, proof, spki))
        # Another log's ID: no line of the note is that log's.
        for ring in (keyring(other), keyring(other, spki)):
            with pytest.raises(VerificationError, match="Signature not found"):
                verify_checkpoint(ring, tlog_entry(jws, proof, other))
        # Only the Ed25519 line left: its C2SP key ID is not a log ID sigstore knows.
        body, _, block = proof["checkpoint"].partition("\n\n")
        ed25519_line, _ = note_lines(block, spki)
        with pytest.raises(VerificationError, match="Signature not found"):
            verify_checkpoint(keyring(spki), tlog_entry(jws, proof, spki,
                                                        checkpoint=f"{body}\n\n{ed25519_line}\n"))


def test_a_checkpoint_altered_after_signing_is_refused(log):
    entries, keys, proofs = log
    spki = p256_note_key(keys)
    ring = keyring(spki)
    whole = len(entries)
    for jws, proof in sample(log):
        note = proof["checkpoint"]
        body, _, block = note.partition("\n\n")
        origin, size, root = body.split("\n")
        another_root = base64.b64encode(hashlib.sha256(b"another tree").digest()).decode()
        altered_bodies = [
            f"{origin}\n{int(size) + 1}\n{root}",  # another size
            f"{origin}x\n{size}\n{root}",  # another origin
            f"{origin}\n{size}\n{root}\nan extension line",  # a line added
            f"{origin}\n{size}\n{another_root}",  # another root (rootHash made to agree)
        ]
        for altered in altered_bodies:
            entry = tlog_entry(jws, proof, spki, checkpoint=f"{altered}\n\n{block}")
            with pytest.raises(VerificationError, match="invalid signature"):
                verify_checkpoint(ring, entry)
        # A bit flipped in the 0x02 signature itself (past the key ID and the DER header).
        ed25519_line, p256_line = note_lines(block, spki)
        name, blob = p256_line[2:].split(" ")
        raw = bytearray(base64.b64decode(blob))
        raw[4 + 10] ^= 0x01
        flipped = f"\u2014 {name} {base64.b64encode(bytes(raw)).decode()}"
        entry = tlog_entry(jws, proof, spki, checkpoint=f"{body}\n\n{ed25519_line}\n{flipped}\n")
        with pytest.raises(VerificationError, match="invalid signature"):
            verify_checkpoint(ring, entry)
        # A genuine checkpoint of another tree: the signature holds, the root does not.
        other = proofs[0, None] if proof["treeSize"] != whole else proofs[0, 17]
        assert other["treeSize"] != proof["treeSize"]
        entry = tlog_entry(jws, proof, spki, checkpoint=other["checkpoint"], root=checkpoint_root(note))
        verify_merkle_inclusion(entry)
        with pytest.raises(VerificationError, match="invalid root hash"):
            verify_checkpoint(ring, entry)
