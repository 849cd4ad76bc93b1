#!/usr/bin/env python3
"""RFC 9162 Merkle proof vectors for stepsign's verifier (SPEC §5.5), computed with pymerkle.

Prints the vectors as JSON (one vector a line); the Swift tests run it and check stepsign's
verifier (`MerkleProof`) against every vector, so nothing here is stored. Leaf i's data is the
ASCII text "leaf i"; for 300 leaves:

- roots: pymerkle's root of every size 1..300 (`get_state`), and of the empty tree;
- inclusion: pymerkle's audit path (`prove_inclusion`, its first hash, the leaf's own, dropped:
  RFC 9162's path starts at the sibling) for the first, middle and last leaf of sizes 1..70 and
  around powers of two (127..129, 255..257, 300);
- consistency: RFC 9162 §2.1.4's PROOF(m, D[n]), written out below from the RFC's text over
  pymerkle's subtree roots (pymerkle's own consistency proofs have another layout), for every
  m <= n of n in 1..24 and pairs around powers of two; each is checked here with RFC 9162
  §2.1.4.2's verification against pymerkle's roots before it is written;
- negative cases (for sizes 3..20 and around powers of two) each verifier must refuse: size 0, index = size, an index past the size, a path
  cut short, a hash added, a bit flipped in each hash, another leaf, another root, another index;
  for consistency: an old size above the new, a proof of equal sizes or from size 0 that is not
  empty, a cut or extended proof, a flipped hash, another old or new root.

Run: python3 Tests/Vectors/generate_merkle.py > vectors.json   (needs pymerkle==6.1.0, scripts/setup)
"""
import hashlib
import json
import sys

from pymerkle import InmemoryTree

LEAVES = 300
SIZES = list(range(1, 71)) + [127, 128, 129, 255, 256, 257, 300]
# Sizes whose proofs also get every negative case: the small ones and those around powers of two.
NEGATIVE_SIZES = [31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 300]


def leaf_data(i):
    return f"leaf {i}".encode()


def node(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def rfc9162_consistent(m, n, old, new, proof):
    """RFC 9162 §2.1.4.2, written out from the RFC: whether `proof` joins the root `old` of m
    leaves to the root `new` of n."""
    if m == n:
        return not proof and old == new
    if m == 0:
        return not proof
    if not proof:
        return False
    if m & (m - 1) == 0:
        proof = [old] + proof
    fn, sn = m - 1, n - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node(c, fr), node(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == old and sr == new


def build():
    tree = InmemoryTree(algorithm="sha256")
    for i in range(LEAVES):
        tree.append_entry(leaf_data(i))
    leaves = [tree.get_leaf(i + 1) for i in range(LEAVES)]
    assert leaves[0] == hashlib.sha256(b"\x00" + leaf_data(0)).digest(), "pymerkle hashes leaves as RFC 9162"
    roots = {n: tree.get_state(n) for n in range(1, LEAVES + 1)}
    roots[0] = hashlib.sha256(b"").digest()

    def subroot(start, end):
        """pymerkle's root of leaves [start, end): a whole tree's root when start is 0, else
        the root over that range, which is what RFC 9162's MTH(D[start:end]) is."""
        if start == 0:
            return roots[end]
        return mth(leaves[start:end])

    def mth(hashes):
        if len(hashes) == 1:
            return hashes[0]
        k = 1
        while k * 2 < len(hashes):
            k *= 2
        return node(mth(hashes[:k]), mth(hashes[k:]))

    def subproof(m, start, end, complete):
        # RFC 9162 §2.1.4.1 SUBPROOF(m, D[start:end], b), over leaf indexes.
        n = end - start
        if m == n:
            return [] if complete else [subroot(start, end)]
        k = 1
        while k * 2 < n:
            k *= 2
        if m <= k:
            return subproof(m, start, start + k, complete) + [subroot(start + k, end)]
        return subproof(m - k, start + k, end, False) + [subroot(start, start + k)]

    hexes = lambda hashes: [h.hex() for h in hashes]
    inclusion, bad_inclusion = [], []
    for size in SIZES:
        for index in sorted({0, size // 2, size - 1}):
            path = list(tree.prove_inclusion(index + 1, size).path)
            assert path[0] == leaves[index]
            path = path[1:]
            good = {"index": index, "size": size, "leaf": index, "path": hexes(path), "root": roots[size].hex()}
            inclusion.append(good)
            if size < 3 or (size > 20 and size not in NEGATIVE_SIZES):
                continue
            def bad(why, **change):
                bad_inclusion.append({**good, **change, "why": why})
            bad("index = size", index=size)
            bad("index past the size", index=size + 5)
            bad("size 0", size=0, root=roots[0].hex())
            if path:
                bad("path cut short", path=hexes(path[:-1]))
                for position in sorted({0, len(path) - 1}):
                    flipped = bytearray(path[position])
                    flipped[position % 32] ^= 0x01
                    bad(f"bit flipped in hash {position}", path=hexes(path[:position] + [bytes(flipped)] + path[position + 1:]))
            bad("a hash added", path=hexes(path + [leaves[0]]))
            bad("another leaf", leaf=(index + 1) % size)
            bad("another root", root=roots[size - 1].hex())
            if index + 1 < size:
                bad("another index", index=index + 1)
    pairs = [(m, n) for n in range(1, 25) for m in range(0, n + 1)]
    pairs += [(m, n) for n in (127, 128, 129, 255, 256, 257, 300) for m in (1, 2, 63, 64, 65, 127, 128, 129, n - 1, n) if m <= n]
    consistency, bad_consistency = [], []
    for m, n in pairs:
        proof = [] if m == 0 else subproof(m, 0, n, True)
        assert rfc9162_consistent(m, n, roots[m], roots[n], proof), (m, n)
        good = {"old": m, "new": n, "proof": hexes(proof), "oldRoot": roots[m].hex(), "newRoot": roots[n].hex()}
        consistency.append(good)
        if n < 3 or m not in (0, 1, n // 2, n - 1, n):
            continue
        def bad(why, **change):
            bad_consistency.append({**good, **change, "why": why})
        if m < n:
            bad("old size above the new", old=n, new=m, oldRoot=roots[n].hex(), newRoot=roots[m].hex())
            if m > 0:
                bad("another old root", oldRoot=roots[m + 1].hex())
            if 0 < m < n - 1:
                bad("another new root", newRoot=roots[n - 1].hex())
        if proof:
            bad("proof cut short", proof=hexes(proof[:-1]))
            bad("a hash added", proof=hexes(proof + [leaves[0]]))
            flipped = bytearray(proof[0])
            flipped[0] ^= 0x80
            bad("bit flipped in the first hash", proof=hexes([bytes(flipped)] + proof[1:]))
        else:
            bad("a hash where none belongs", proof=hexes([leaves[0]]))
    for case in bad_inclusion:
        path = [bytes.fromhex(h) for h in case["path"]]
        root = rfc9162_root(leaves[case["leaf"]], case["index"], case["size"], path)
        assert root is None or root.hex() != case["root"], case
    for case in bad_consistency:
        assert not rfc9162_consistent(case["old"], case["new"], bytes.fromhex(case["oldRoot"]),
                              bytes.fromhex(case["newRoot"]), [bytes.fromhex(h) for h in case["proof"]]), case
    return {
        "leaves": LEAVES,
        "leafData": "leaf <i>, ASCII; leaf hash SHA-256(0x00 || data), node SHA-256(0x01 || left || right)",
        "roots": [roots[n].hex() for n in range(0, LEAVES + 1)],
        "inclusion": inclusion, "badInclusion": bad_inclusion,
        "consistency": consistency, "badConsistency": bad_consistency,
    }


def rfc9162_root(leaf, index, size, path):
    """RFC 9162 §2.1.3.2, written out from the RFC: the root an inclusion path leads to from
    the leaf hash at `index` of `size`, or None when the path does not fit the size."""
    if not 0 <= index < size:
        return None
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            r = node(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node(r, p)
        fn >>= 1
        sn >>= 1
    return r if sn == 0 else None


def serialize(vectors):
    """JSON with one vector a line, so that a change reads as a diff."""
    parts = []
    for key, value in vectors.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            items = ",\n  ".join(json.dumps(item, separators=(",", ":")) for item in value)
            parts.append(f"{json.dumps(key)}: [\n  {items}\n]")
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main():
    sys.stdout.write(serialize(build()))


if __name__ == "__main__":
    main()
