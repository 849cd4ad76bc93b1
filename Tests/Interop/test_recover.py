"""Issue 27 / SPEC 5.5: `stepsign admin recover` after a restore that lost entries.

An older database restored under a state directory that kept the last checkpoint the daemon
signed: signing is refused (15). `stepsign admin recover` starts a new log epoch: a signed
`logEpochStarted` event at the restored log's end names the old log's last checkpoint and the
lost range, checkpoints carry the new origin, signing resumes, the audit and `stepsign-verify`
accept the log, and a restart keeps it. Attacks: an epoch written into the database by hand,
or one removed, is refused; recovering a log that lost nothing is refused."""
import base64
import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import time

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from conftest import BIN, CLI, Daemon

VERIFY = os.path.join(BIN, "stepsign-verify")
USER, PASSWORD = "recover", "Cobalt-Meadow-62"


def sign(client, payload):
    reply = client.call("authenticateUserAndSignData", user=USER, payload=payload, reason="recover",
                        authLevel=0, authenticatorType=0)
    code = reply["error"]["code"]
    return code, (reply["events"][-1]["details"] if code == 0 else reply["error"])


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120)


def claims(jws):
    payload = jws.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def note_body(note):
    origin, size, root = note.split("\n")[:3]
    return origin, int(size), root


def restore(directory, backup_file):
    state = os.path.join(directory, "state")
    for suffix in ("", "-wal", "-shm"):
        path = os.path.join(state, "stepsign.sqlite" + suffix)
        if os.path.exists(path):
            os.unlink(path)
    shutil.copy2(backup_file, os.path.join(state, "stepsign.sqlite"))


def assert_refused(directory, extra, words):
    """A daemon started on `directory` refuses to sign (15), and `status` says why, with `words`."""
    daemon = Daemon(directory, extra=extra)
    try:
        client = daemon.client()
        assert sign(client, "refused")[0] == 15
        problem = client.call("status")["result"]["logProblem"]
        assert words in problem, problem
        client.close()
    finally:
        daemon.stop()


@pytest.fixture
def lost():
    """A daemon's state directory whose database was replaced by an older backup: 5 entries of
    the old log's `lost_through + 1` are gone."""
    with tempfile.TemporaryDirectory(prefix="stepsign-recover-") as directory:
        tiles = os.path.join(directory, "tiles")
        extra = f'[ledger]\ntiles_dir = "{tiles}"\n'
        daemon = Daemon(directory, extra=extra)
        monitor_state = os.path.join(directory, "monitor.json")
        backup_file = os.path.join(directory, "older.sqlite")
        try:
            client = daemon.client()
            assert client.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
            kept = [sign(client, f"kept {i}")[1]["payloadSignature"] for i in range(5)]
            made = run(CLI, "--socket", daemon.socket, "admin", "backup", "--to", backup_file, "--json")
            assert made.returncode == 0, made.stderr
            for i in range(5):
                assert sign(client, f"lost {i}")[0] == 0
            checkpoint = client.call("getCheckpoint")["result"]["checkpoint"]
            # A monitor that saw the old log, lost entries and all.
            watched = run(CLI, "--socket", daemon.socket, "monitor", "--state", monitor_state, "--once")
            assert watched.returncode == 0, watched.stderr
            client.close()
        finally:
            daemon.stop()
        restore(directory, backup_file)
        yield {"directory": directory, "backup": json.loads(made.stdout), "old_checkpoint": checkpoint, "kept": kept,
               "extra": extra, "tiles": tiles, "monitor_state": monitor_state}


def test_recover_starts_a_new_epoch_that_names_the_loss_and_signing_resumes(lost):
    directory = lost["directory"]
    old_origin, old_size, _ = note_body(lost["old_checkpoint"])
    found = lost["backup"]["ledgerSize"]
    assert found < old_size
    daemon = Daemon(directory, extra=lost["extra"])
    try:
        client = daemon.client()
        assert sign(client, "refused before the recovery")[0] == 15
        assert "logProblem" in client.call("status")["result"]
        # An admin's act: like every `admin.` operation, 13 for any other peer (AdminTests).
        result = run(CLI, "--socket", daemon.socket, "admin", "recover", "--json")
        assert result.returncode == 0, result.stderr
        recovered = json.loads(result.stdout)
        assert recovered["epoch"] == 2
        assert recovered["previousOrigin"] == old_origin
        assert recovered["origin"] == old_origin + "/epoch2"
        assert (recovered["lostFrom"], recovered["lostThrough"]) == (found, old_size - 1)
        assert recovered["logIndex"] == found, "the event is the restored log's next entry"
        assert note_body(recovered["previousCheckpoint"]) == note_body(lost["old_checkpoint"])
        origin, size, _ = note_body(recovered["checkpoint"])
        assert (origin, size) == (recovered["origin"], found + 1)

        # Signing resumes, in the new epoch; status has no problem any more.
        code, details = sign(client, "after the recovery")
        assert code == 0, details
        assert details["logIndex"] == found + 1
        assert "logProblem" not in client.call("status")["result"]
        # Nothing more to recover: refused, and no second epoch.
        again = client.call("admin.recover")
        assert again["error"]["code"] == 4 and "nothing" in again["error"]["message"], again

        # The event in the log, signed, naming the old checkpoint and the lost range.
        entries = client.call("admin.exportLedger", limit=10000)["result"]
        event = entries["entries"][found]
        assert event["kind"] == "event" and event["signatureID"] == recovered["eventID"]
        body = claims(event["payloadSignature"])
        assert body["event"] == "logEpochStarted"
        assert body["details"]["origin"] == recovered["origin"]
        assert body["details"]["previousOrigin"] == old_origin
        assert body["details"]["previousCheckpoint"] == recovered["previousCheckpoint"]
        assert (body["details"]["lostFrom"], body["details"]["lostThrough"]) == (found, old_size - 1)
        # The restored entries are untouched, under the old origin's checkpoints.
        assert [e["payloadSignature"] for e in entries["entries"][:found]][-5:] == lost["kept"]

        audit = client.call("admin.auditVerify")["result"]
        assert audit["ok"] is True, audit

        # Log keys under both names; a proof of the new signature checks offline under the new.
        log_keys = run(CLI, "--socket", daemon.socket, "keys", "export", "--log-keys").stdout.split()
        names = {key.split("+")[0] for key in log_keys}
        assert names == {old_origin, recovered["origin"]}, names
        keys_file = os.path.join(directory, "keys.json")
        with open(keys_file, "w") as f:
            f.write(run(CLI, "--socket", daemon.socket, "keys", "export").stdout)
        proof_file = os.path.join(directory, "after.tlog-proof")
        proof = run(CLI, "--socket", daemon.socket, "proof", claims(details["payloadSignature"])["jti"], "--output", proof_file)
        assert proof.returncode == 0, proof.stderr
        jws_file = os.path.join(directory, "after.jws")
        with open(jws_file, "w") as f:
            f.write(details["payloadSignature"])
        new_keys = [arg for key in log_keys if key.startswith(recovered["origin"] + "+") for arg in ("--log-key", key)]
        checked = run(VERIFY, "--keys", keys_file, "--min-level", "0", "--json", "--proof", proof_file, *new_keys, jws_file)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert json.loads(checked.stdout)["origin"] == recovered["origin"]
        # The new origin's Ed25519 line checked by hand with `cryptography` (C2SP signed-note:
        # key ID = SHA-256(name ‖ 0x0A ‖ 0x01 ‖ key)[:4], signature over the note's text).
        ed25519 = next(k for k in log_keys if k.startswith(recovered["origin"] + "+")
                       and base64.b64decode(k.split("+", 2)[2])[0] == 1)
        raw = base64.b64decode(ed25519.split("+", 2)[2])[1:]
        key_id = hashlib.sha256(recovered["origin"].encode() + b"\n\x01" + raw).digest()[:4]
        assert ed25519.split("+")[1] == key_id.hex()
        text, _, signatures = recovered["checkpoint"].partition("\n\n")
        line = next(line for line in signatures.splitlines()
                    if line.startswith("\u2014 " + recovered["origin"] + " ")
                    and base64.b64decode(line.rsplit(" ", 1)[1])[:4] == key_id)
        Ed25519PublicKey.from_public_bytes(raw).verify(base64.b64decode(line.rsplit(" ", 1)[1])[4:], (text + "\n").encode())
        # The old origin's key does not sign the new epoch's checkpoints.
        old_keys = [arg for key in log_keys if key.startswith(old_origin + "+") for arg in ("--log-key", key)]
        old_key_only = run(VERIFY, "--keys", keys_file, "--min-level", "0", "--json", "--proof", proof_file, *old_keys, jws_file)
        assert old_key_only.returncode == 1 and json.loads(old_key_only.stdout)["reason"] == "not-in-log", old_key_only.stdout
        assert json.loads(old_key_only.stdout)["message"] == ("the proof does not show this signature in the log: not verified: "
                                                              f'no log key is given for the origin "{recovered["origin"]}"'), old_key_only.stdout

        # The export checks offline, epochs and all.
        export_file = os.path.join(directory, "ledger.json")
        exported = run(CLI, "--socket", daemon.socket, "admin", "audit", "export")
        assert exported.returncode == 0, exported.stderr
        with open(export_file, "w") as f:
            f.write(exported.stdout)
        offline = run(VERIFY, "ledger", "--keys", keys_file, *[a for k in log_keys for a in ("--log-key", k)],
                      "--json", export_file)
        assert offline.returncode == 0 and json.loads(offline.stdout)["ok"] is True, offline.stdout + offline.stderr

        # The monitor that saw the old log raises the alarm; one started afresh follows the new
        # epoch and reports its event.
        old_view = run(CLI, "--socket", daemon.socket, "monitor", "--state", lost["monitor_state"], "--once")
        assert old_view.returncode == 1 and "inconsistent-checkpoint" in old_view.stderr, old_view.stderr
        assert recovered["origin"] in old_view.stderr, old_view.stderr
        fresh = run(CLI, "--socket", daemon.socket, "monitor", "--state", os.path.join(directory, "fresh.json"), "--once")
        assert fresh.returncode == 0, fresh.stderr
        reported = [json.loads(line) for line in fresh.stdout.splitlines()]
        assert any(line.get("event") == "logEpochStarted" and line["index"] == found for line in reported), reported

        # The published tiles start over under the new origin and check with its key.
        client.call("getCheckpoint")
        published = None
        for _ in range(200):
            with open(os.path.join(lost["tiles"], "checkpoint")) as f:
                published = f.read()
            if published.startswith(recovered["origin"] + "\n") and note_body(published)[1] >= found + 2:
                break
            time.sleep(0.05)
        assert published.startswith(recovered["origin"] + "\n"), published
        tiles_ok = run(VERIFY, "log", lost["tiles"], *new_keys, "--json")
        assert tiles_ok.returncode == 0 and json.loads(tiles_ok.stdout)["ok"] is True, tiles_ok.stdout + tiles_ok.stderr
        client.close()
    finally:
        daemon.stop()

    # A restart goes on in the new epoch.
    daemon = Daemon(directory, extra=lost["extra"])
    try:
        client = daemon.client()
        code, details = sign(client, "after a restart")
        assert code == 0, details
        checkpoint = client.call("getCheckpoint")["result"]["checkpoint"]
        assert note_body(checkpoint)[0] == recovered["origin"]
        assert client.call("admin.auditVerify")["result"]["ok"] is True
        client.close()
    finally:
        daemon.stop()


def test_an_epoch_written_into_the_database_by_hand_is_refused():
    """The attacker's shortcut past the checks: a row that renames the log from its next entry
    on, with no recovery and no signed event. Without the event the daemon takes no epoch."""
    with tempfile.TemporaryDirectory(prefix="stepsign-forged-epoch-") as directory:
        daemon = Daemon(directory)
        try:
            client = daemon.client()
            assert client.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
            assert sign(client, "before")[0] == 0
            client.close()
        finally:
            daemon.stop()
        database = os.path.join(directory, "state", "stepsign.sqlite")
        with sqlite3.connect(database) as db:
            (origin,) = db.execute("SELECT origin FROM log_origin").fetchone()
            (count,) = db.execute("SELECT count(*) FROM ledger").fetchone()
            db.execute("INSERT INTO log_epochs (epoch, origin, first_index, created_at) VALUES (2, ?, ?, 0)",
                       (origin + "/epoch2", count))
        assert_refused(directory, "", "no signed logEpochStarted event")


def test_an_epoch_removed_from_the_database_is_refused(lost):
    directory = lost["directory"]
    daemon = Daemon(directory, extra=lost["extra"])
    try:
        client = daemon.client()
        # The CLI's human lines (the --json form is checked above).
        human = run(CLI, "--socket", daemon.socket, "admin", "recover")
        assert human.returncode == 0, human.stderr
        lines = human.stdout.splitlines()
        assert re.fullmatch(r"new log epoch 2: origin \S+/epoch2 \(was \S+\)", lines[0]), lines
        assert re.fullmatch(r"lost: log indexes \d+ to \d+ \(5 entries\), recorded by event [0-9a-f-]{36} at index \d+",
                            lines[1]), lines
        assert lines[2].startswith("signing resumes; give witnesses and monitors the new origin's log key"), lines
        # Again: refused, with the reason, and exit 1.
        again = run(CLI, "--socket", daemon.socket, "admin", "recover")
        assert again.returncode == 1 and re.fullmatch(
            r"stepsign: admin\.recover refused: error 4: the log extends the last checkpoint this daemon signed \(\d+ entries\): "
            r"nothing was lost, there is nothing to recover\n", again.stderr), again.stderr
        assert sign(client, "in the new epoch")[0] == 0
        client.close()
    finally:
        daemon.stop()
    database = os.path.join(directory, "state", "stepsign.sqlite")
    with sqlite3.connect(database) as db:
        db.execute("DROP TRIGGER log_epochs_no_delete")
        db.execute("DELETE FROM log_epochs")
    assert_refused(directory, lost["extra"], "origin")
