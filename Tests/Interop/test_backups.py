"""Issue 27: `stepsign admin backup --to FILE`, made while the daemon signs, and restores.

A backup restored with the key files it lists gives a daemon whose ledger verifies and holds
every signature acknowledged before the backup began; a restore that lost entries (an older
database under a state directory that kept the last checkpoint it signed) is refused, not
pretended: signing gets 15 and `status` says why."""
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import threading

from conftest import CLI, Daemon

USER, PASSWORD = "backup", "Cobalt-Meadow-62"


def sign(client, payload):
    reply = client.call("authenticateUserAndSignData", user=USER, payload=payload, reason="backup",
                        authLevel=0, authenticatorType=0)
    if reply["error"]["code"] != 0:
        return reply["error"]["code"], None
    event = reply["events"][-1]
    assert event["status"]["code"] == 100, reply
    return 0, event["details"]["payloadSignature"]


def backup(daemon, path):
    result = subprocess.run([CLI, "--socket", daemon.socket, "admin", "backup", "--to", path, "--json"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def ledger(path):
    """(size, JWS list) of a backup file, read with Python's sqlite3."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert db.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        rows = db.execute("SELECT seq, jws FROM ledger ORDER BY seq").fetchall()
    assert [seq for seq, _ in rows] == list(range(1, len(rows) + 1))
    return len(rows), [jws for _, jws in rows]


def test_a_backup_made_while_signing_restores_into_a_daemon_that_verifies_and_signs():
    with tempfile.TemporaryDirectory(prefix="stepsign-backup-") as directory:
        original = os.path.join(directory, "original")
        os.mkdir(original)
        daemon = Daemon(original)
        try:
            admin = daemon.client()
            assert admin.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
            before = [sign(admin, f"before the backup {i}")[1] for i in range(20)]
            # Signers go on while the backup is made.
            stop, during = threading.Event(), []

            def signer(number):
                client = daemon.client()
                while not stop.is_set():
                    code, jws = sign(client, f"during the backup {number}")
                    assert code == 0
                    during.append(jws)
                client.close()

            threads = [threading.Thread(target=signer, args=(n,)) for n in range(4)]
            for thread in threads:
                thread.start()
            target = os.path.join(directory, "stepsign-backup.sqlite")
            made = backup(daemon, target)
            stop.set()
            for thread in threads:
                thread.join()
            assert during, "nothing was signed while the backup was made"
            assert os.stat(target).st_mode & 0o777 == 0o600
            assert made["bytes"] == os.path.getsize(target)
            size, jws_in_backup = ledger(target)
            assert size == made["ledgerSize"] and set(before) <= set(jws_in_backup)
            assert "keys/seal.key" in made["keys"] and "keys/log-checkpoint" not in made["keys"]
            assert any(key.endswith(".key") and "seal" not in key for key in made["keys"]), made["keys"]
            # The daemon's own copy is gone: backups do not pile up in the state directory.
            assert os.listdir(os.path.join(original, "state", "backups")) == []
            admin.close()
        finally:
            daemon.stop()

        # The restore procedure: the database from the backup, the key files it lists.
        restored = os.path.join(directory, "restored")
        os.makedirs(os.path.join(restored, "state", "keys"), mode=0o700)
        os.chmod(os.path.join(restored, "state"), 0o700)
        shutil.copy2(target, os.path.join(restored, "state", "stepsign.sqlite"))
        for key in made["keys"]:
            shutil.copy2(os.path.join(original, "state", key), os.path.join(restored, "state", key))
        daemon = Daemon(restored)
        try:
            client = daemon.client()
            audit = client.call("admin.auditVerify")
            assert audit["error"]["code"] == 0 and audit["result"]["ok"] is True, audit
            # The restored ledger is the backup's, then what this start recorded (its events).
            exported = client.call("admin.exportLedger", limit=10000)["result"]["entries"]
            assert [entry["payloadSignature"] for entry in exported[:size]] == jws_in_backup
            assert audit["result"]["entries"] == len(exported) >= size
            assert sign(client, "after the restore")[0] == 0
            client.close()
        finally:
            daemon.stop()


def test_a_restore_that_lost_entries_is_refused_not_pretended():
    with tempfile.TemporaryDirectory(prefix="stepsign-backup-lost-") as directory:
        daemon = Daemon(directory)
        target = os.path.join(directory, "older.sqlite")
        try:
            client = daemon.client()
            assert client.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
            for i in range(5):
                assert sign(client, f"kept {i}")[0] == 0
            made = backup(daemon, target)
            for i in range(5):
                assert sign(client, f"lost {i}")[0] == 0
            # A checkpoint of the log with the entries the backup lacks, kept in keys/.
            checkpoint = client.call("getCheckpoint")
            assert checkpoint["error"]["code"] == 0, checkpoint
            client.close()
        finally:
            daemon.stop()
        state = os.path.join(directory, "state")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(os.path.join(state, "stepsign.sqlite" + suffix)):
                os.unlink(os.path.join(state, "stepsign.sqlite" + suffix))
        shutil.copy2(target, os.path.join(state, "stepsign.sqlite"))

        daemon = Daemon(directory)
        try:
            client = daemon.client()
            code, _ = sign(client, "on the restored log")
            assert code == 15
            status = client.call("status")["result"]
            assert "logProblem" in status, status
            # Still refused: no signature lands on a log that lost what this daemon signed.
            assert sign(client, "again on the restored log")[0] == 15
            client.close()
        finally:
            daemon.stop()
