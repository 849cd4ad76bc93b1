"""Issue 27: the state directory on a filesystem filled to the last byte.

The state directory is a size-limited tmpfs in a mount namespace of its own, held by a
`sleep` that only root can make (`unshare -m`); the daemon is started in that namespace with
`nsenter`, and the test reaches the files through /proc/HOLDER/root. Filled to the last byte
(a filler file grown until ENOSPC, then byte by byte): signing gets 15, nothing acknowledged is
lost, nothing is half-written, the daemon keeps running and answers, the log says why once (not
per request), and once the filler is gone the daemon signs again by itself; restarted on the
same files, its ledger verifies and holds every signature it acknowledged."""
import base64
import json
import os
import shutil
import sqlite3
import tempfile
import time

import pytest

from conftest import Daemon
from full_disk import Namespace, fill

USER, PASSWORD = "disk", "Granite-Harbor-81"
SIZE = "6m"

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None
                                or shutil.which("nsenter") is None, reason="needs root, unshare and nsenter")


def sign(client, payload, level=0):
    """One signature at `level` (1: the password answered); the final reply's error code and
    the signature ID when it was signed."""
    reply = client.call("authenticateUserAndSignData", user=USER, payload=payload, reason="full disk",
                        authLevel=level, authenticatorType=0)
    if reply["error"]["code"] == 0 and level == 1:
        assert reply["events"][0]["event"] == "getPassword", reply
        reply = client.call("setPassword", password=PASSWORD, challengeMode=12)
    if reply["error"]["code"] != 0:
        return reply["error"]["code"], None
    event = reply["events"][-1]
    assert event["event"] == "onAuthenticateUserAndSignData" and event["status"]["code"] == 100, reply
    claims = event["details"]["payloadSignature"].split(".")[1]
    return 0, json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)))["jti"]


def log_text(daemon):
    with open(os.path.join(daemon.directory, "stepsignd.log"), errors="replace") as f:
        return f.read()


def test_a_full_disk_refuses_with_15_loses_nothing_and_signs_again_once_space_is_freed():
    with tempfile.TemporaryDirectory(prefix="stepsign-full-disk-") as directory:
        state = os.path.join(directory, "state")
        os.mkdir(state, 0o700)
        namespace = Namespace(state, SIZE)
        daemon = None
        try:
            daemon = Daemon(directory, prefix=namespace.prefix())
            client = daemon.client()
            assert client.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
            acknowledged = []
            for i in range(50):
                code, signature_id = sign(client, f"before the disk filled {i}")
                assert code == 0
                acknowledged.append(signature_id)

            filler = namespace.inside(os.path.join(state, "filler"))
            assert fill(filler) > 0
            # SQLite writes into the pages its WAL already has until it must grow a file: sign
            # until the first refusal, then every request is refused.
            refused_at = None
            for i in range(20000):
                code, signature_id = sign(client, f"while the disk fills {i}")
                if code == 0:
                    acknowledged.append(signature_id)
                    continue
                assert code == 15, code
                refused_at = i
                break
            assert refused_at is not None, "20,000 signatures fit on a full disk"
            print(f"the first refusal came after {refused_at} signatures on the full disk")
            for i in range(40):
                assert sign(client, f"on a full disk {i}") == (15, None)
            # A step-up: the challenge is made (nothing written), the answer is refused with 15
            # (its attempt could not be reserved, so none is spent) and the challenge stays.
            challenge = client.call("authenticateUserAndSignData", user=USER, payload="a step-up on a full disk",
                                    reason="full disk", authLevel=1, authenticatorType=0)
            assert challenge["events"][0]["event"] == "getPassword", challenge
            assert client.call("setPassword", password=PASSWORD, challengeMode=12)["error"]["code"] == 15
            # The daemon is up and answers what needs no write.
            assert daemon.process.poll() is None
            assert client.call("status")["error"]["code"] == 0
            # Why, once: one line for some forty refusals, none per request.
            text = log_text(daemon)
            full = [line for line in text.splitlines() if "no space left" in line.lower()]
            assert len(full) == 1, (full, text[-3000:])
            assert "request failed" not in text, [line for line in text.splitlines() if "request failed" in line][:3]

            # Space again: the next signature is made, without a restart, and the log says so once.
            os.unlink(filler)
            # The step-up's answer, sent again, signs.
            answered = client.call("setPassword", password=PASSWORD, challengeMode=12)
            event = answered["events"][-1]
            assert event["event"] == "onAuthenticateUserAndSignData" and event["status"]["code"] == 100, answered
            code, signature_id = sign(client, "after the space was freed")
            assert code == 0, code
            acknowledged.append(signature_id)
            code, signature_id = sign(client, "a step-up after the space was freed", level=1)
            assert code == 0, code
            acknowledged.append(signature_id)
            resumed = [line for line in log_text(daemon).splitlines() if "space again" in line.lower()]
            assert len(resumed) == 1, resumed

            audit = client.call("admin.auditVerify")
            assert audit["error"]["code"] == 0 and audit["result"]["ok"] is True, audit
            client.close()
            daemon.stop()
            daemon = None

            # Nothing half-written: the database is whole, and a daemon started on the same
            # files verifies its ledger and holds every signature acknowledged.
            database = namespace.inside(os.path.join(state, "stepsign.sqlite"))
            with sqlite3.connect(f"file:{database}?immutable=1", uri=True) as db:  # the daemon is stopped
                assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            daemon = Daemon(directory, prefix=namespace.prefix())
            client = daemon.client()
            audit = client.call("admin.auditVerify")
            assert audit["error"]["code"] == 0 and audit["result"]["ok"] is True, audit
            in_ledger, after = set(), 0
            while True:
                page = client.call("admin.exportLedger", afterSeq=after, limit=10000)
                assert page["error"]["code"] == 0, page
                entries = page["result"]["entries"]
                if not entries:
                    break
                in_ledger |= {entry["signatureID"] for entry in entries}
                after = entries[-1]["seq"]
            assert set(acknowledged) <= in_ledger, set(acknowledged) - in_ledger
            assert sign(client, "after the restart")[0] == 0
            client.close()
        finally:
            if daemon is not None:
                daemon.process.kill()
                daemon.process.wait()
            namespace.close()
