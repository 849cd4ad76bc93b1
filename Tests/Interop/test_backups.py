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

import pytest

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
            assert "keys/seal.key" in made["keys"]
            # Neither the kept checkpoint nor its companions (.pending, .head) come back from a copy.
            assert not any(key.startswith("keys/log-checkpoint") for key in made["keys"]), made["keys"]
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


class FakeDaemon:
    """A socket that answers every request line as if it were stepsignd's `admin.backup`,
    naming `path` as the backup it made: what a hostile or compromised daemon could reply."""

    def __init__(self, directory, path):
        import socket
        self.path = path
        self.socket = os.path.join(directory, "fake.sock")
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(self.socket)
        self.server.listen(4)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            with connection, connection.makefile("rwb") as stream:
                for line in stream:
                    request = json.loads(line)
                    reply = {"id": request["id"], "error": {"code": 0, "message": "OK"}, "events": [],
                             "result": {"path": self.path, "bytes": 7, "ledgerSize": 1, "ledgerHead": "00" * 32,
                                        "keys": ["keys/seal.key"]}}
                    stream.write(json.dumps(reply).encode() + b"\n")
                    stream.flush()

    def close(self):
        import socket
        self.server.shutdown(socket.SHUT_RDWR)
        self.server.close()


def hostile_layout(directory, case):
    """A state directory as the daemon makes it (0700, `backups/` in it), a victim file outside
    it, and the path the hostile reply names for `case`."""
    state = os.path.join(directory, "state")
    backups = os.path.join(state, "backups")
    os.makedirs(backups, mode=0o700)
    victim = os.path.join(directory, "victim")
    with open(victim, "w") as f:
        f.write("not the daemon's\n")
    if case == "absolute path outside":
        return victim, victim
    if case == "dot-dot out of the directory":
        return os.path.join(backups, "..", "..", "victim"), victim
    if case == "relative path":
        return "../../victim", victim
    if case == "symbolic link out of the directory":
        link = os.path.join(backups, "stepsign-2026-01-01T000000Z.sqlite")
        os.symlink(victim, link)
        return link, victim
    if case == "backups is a symbolic link":
        elsewhere = os.path.join(directory, "elsewhere")
        os.mkdir(elsewhere, 0o700)
        target = os.path.join(elsewhere, "stepsign-2026-01-01T000000Z.sqlite")
        shutil.copy(victim, target)
        os.rmdir(backups)
        os.symlink(elsewhere, backups)
        return os.path.join(backups, "stepsign-2026-01-01T000000Z.sqlite"), target
    if case == "not a backups directory":
        target = os.path.join(state, "stepsign.sqlite")
        shutil.copy(victim, target)
        return target, target
    if case == "a file of another owner":
        # The directories are the daemon user's (here nobody's); the file in them is not.
        target = os.path.join(backups, "stepsign-2026-01-01T000000Z.sqlite")
        shutil.copy(victim, target)
        os.chown(state, 65534, 65534)
        os.chown(backups, 65534, 65534)
        return target, target
    raise AssertionError(case)


def backup_from_fake_daemon(directory, named, target):
    """`stepsign admin backup --to TARGET` against a fake daemon whose reply names `named`."""
    fake = FakeDaemon(directory, named)
    try:
        return subprocess.run([CLI, "--socket", fake.socket, "admin", "backup", "--to", target],
                              capture_output=True, text=True, timeout=60)
    finally:
        fake.close()


HOSTILE = ["absolute path outside", "dot-dot out of the directory", "relative path",
           "symbolic link out of the directory", "backups is a symbolic link", "not a backups directory",
           "a file of another owner"]


@pytest.mark.parametrize("case", HOSTILE)
def test_the_cli_copies_and_removes_nothing_outside_the_daemons_backup_directory(case):
    """Issue 39: `stepsign admin backup` copied, then unlinked, whatever path the reply named."""
    if case == "a file of another owner" and os.getuid() != 0:
        pytest.skip("needs root to give the directories to another user")
    with tempfile.TemporaryDirectory(prefix="stepsign-backup-") as directory:
        os.chmod(directory, 0o755)
        named, victim = hostile_layout(directory, case)
        target = os.path.join(directory, "copy.sqlite")
        result = backup_from_fake_daemon(directory, named, target)
        assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
        assert f"refusing the backup file the daemon named, {named}" in result.stderr, result.stderr
        assert "nothing was copied or removed" in result.stderr, result.stderr
        assert os.path.exists(victim) and open(victim).read() == "not the daemon's\n"
        assert not os.path.exists(target) and not os.path.exists(target + ".tmp")


def test_the_cli_copies_and_removes_a_backup_in_the_daemons_backup_directory():
    """The same fake daemon naming a file where stepsignd makes them: copied, then removed."""
    with tempfile.TemporaryDirectory(prefix="stepsign-backup-") as directory:
        backups = os.path.join(directory, "state", "backups")
        os.makedirs(backups, mode=0o700)
        made = os.path.join(backups, "stepsign-2026-01-01T000000Z.sqlite")
        with open(made, "w") as f:
            f.write("backup\n")
        os.chmod(made, 0o600)
        target = os.path.join(directory, "copy.sqlite")
        result = backup_from_fake_daemon(directory, made, target)
        assert result.returncode == 0, result.stderr
        assert open(target).read() == "backup\n" and not os.path.exists(made)
