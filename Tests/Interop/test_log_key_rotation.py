"""SPEC 2 and 5.6: the log key outlives the signing key, and a log-key rotation loses no
witness. Real processes on the loopback: a stepsignd, `stepsign-witnessd --once` and three
`stepsign-witness serve`: A holds only the log key the daemon started with, B only the key a
rotation makes, C both. A signing-key rotation changes nothing for A (before, every witness
answered 403 from the next checkpoint on). After `stepsign admin log-key rotate`, all three
cosign every checkpoint within `ledger.log_key_overlap_entries`; after it the new key alone
signs, and B and C go on while A, never given the new key, refuses (403), as docs/witnesses.md
says it will."""
import base64
import os
import tempfile

import pytest

from conftest import CLI, Daemon, PASSWORD, USER
from test_witnesses import Witness, free_port, push, run, sign

OVERLAP = 3


def ed25519_keys(lines):
    """The Ed25519 (type 0x01) note verifier keys among `lines`."""
    return [line for line in lines if base64.b64decode(line.split("+", 2)[2])[0] == 1]


def outcomes_of(daemon, names):
    code, outcomes, errors = push(daemon)
    return {name: outcomes[name]["outcome"] for name in names}, code, errors


@pytest.fixture
def rotation():
    with tempfile.TemporaryDirectory() as directory:
        hosts = ("127.0.0.4", "127.0.0.5", "127.0.0.6")
        witnesses = {label: Witness(directory, f"witness.test/{label}", host, free_port(host), [])
                     for label, host in zip("ABC", hosts)}
        config = f"[ledger]\nlog_key_overlap_entries = {OVERLAP}\n"
        for w in witnesses.values():
            config += f'[[witness]]\nname = "{w.name}"\nurl = "http://{w.host}:{w.port}"\nkey = "{w.vkey}"\n'
        os.mkdir(os.path.join(directory, "d"))
        daemon = Daemon(os.path.join(directory, "d"), extra=config)
        client = daemon.client()
        assert client.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
        try:
            yield directory, daemon, client, witnesses
        finally:
            client.close()
            daemon.stop()
            for w in witnesses.values():
                if w.process:
                    w.stop()


def test_witnesses_with_the_old_key_the_new_key_or_both_keep_cosigning(rotation):
    directory, daemon, client, witnesses = rotation
    a, b, c = witnesses["A"], witnesses["B"], witnesses["C"]
    old = ed25519_keys(run(CLI, "--socket", daemon.socket, "keys", "export", "--log-keys").stdout.split())
    assert len(old) == 1
    a.start(old)
    c.start(old)
    sign(directory, daemon, "before any rotation")
    seen, _, errors = outcomes_of(daemon, [a.name, c.name])
    assert seen == {a.name: "cosigned", c.name: "cosigned"}, errors

    # A signing key's rotation: the log key stays, so A and C go on.
    rotated = run(CLI, "--socket", daemon.socket, "admin", "key", "rotate")
    assert rotated.returncode == 0, rotated.stderr
    assert ed25519_keys(run(CLI, "--socket", daemon.socket, "keys", "export", "--log-keys").stdout.split()) == old
    sign(directory, daemon, "after the signing key's rotation")
    seen, _, errors = outcomes_of(daemon, [a.name, c.name])
    assert seen == {a.name: "cosigned", c.name: "cosigned"}, errors

    # The log key's rotation: B is given the new key alone, C both, A keeps the old one.
    result = run(CLI, "--socket", daemon.socket, "admin", "log-key", "rotate")
    assert result.returncode == 0, result.stderr
    printed = result.stdout.splitlines()
    assert printed[-1].startswith("both keys sign every checkpoint until the log has ")
    until = int(printed[-1].rsplit(" ", 2)[-2])
    new = [key for key in ed25519_keys(printed[:-1]) if key not in old]
    assert len(new) == 1
    b.start(new)
    c.stop()
    c.start(old + new)
    sign(directory, daemon, "within the overlap")
    seen, _, errors = outcomes_of(daemon, [a.name, b.name, c.name])
    assert seen == {a.name: "cosigned", b.name: "cosigned", c.name: "cosigned"}, errors

    # Past the overlap: the new key alone signs; B and C go on, A (never given it) refuses.
    for n in range(OVERLAP + 1):
        sign(directory, daemon, f"past the overlap {n}")
    note = client.call("getCheckpoint")["result"]["checkpoint"]
    assert int(note.split("\n")[1]) >= until
    seen, _, errors = outcomes_of(daemon, [a.name, b.name, c.name])
    assert seen[b.name] == "cosigned" and seen[c.name] == "cosigned", errors
    assert seen[a.name] == "alarm", errors
