"""SPEC 5.5-5.6 "cosignature rows are checked ... before they are stored and again before they
are served", with a real `stepsign-witness serve`, a real stepsignd and `stepsign-witnessd`:
whoever writes the database inserts a row of the witness's name and key ID for the size of the
next checkpoint before the witness answers. The witness's genuine cosignature is still stored
and served: `waitForProof` hands back a proof that carries it (and not the forged line),
`stepsign-verify --witness` accepts it, and the published tiles' `checkpoint` carries it too;
the audit still reports the forged row."""
import base64
import json
import os
import sqlite3
import tempfile
import time

from conftest import CLI, Daemon, PASSWORD, USER
from test_witnessed_proofs import sign_level_0_details
from test_witnesses import VERIFY, Witness, cosignature_by_hand, daemon_config, free_port, push, run

HOST = "127.0.0.9"


def forged_line(witness):
    """A line of the witness's name and key ID whose signature is not its own."""
    name, key_id, _ = witness.vkey.split("+", 2)
    return f"\u2014 {name} " + base64.b64encode(bytes.fromhex(key_id) + bytes(72)).decode()


def test_a_row_forged_before_the_witness_answers_does_not_keep_its_cosignature_out():
    with tempfile.TemporaryDirectory() as directory:
        witness = Witness(directory, "witness.test/f1", HOST, free_port(HOST), [])
        os.mkdir(os.path.join(directory, "a"))
        tiles = os.path.join(directory, "tiles")
        config = daemon_config([witness], 1).replace("[ledger]\n", f'[ledger]\ntiles_dir = "{tiles}"\n', 1)
        daemon = Daemon(os.path.join(directory, "a"), extra=config)
        client = daemon.client()
        try:
            assert client.call("admin.addUser", user=USER, password=PASSWORD)["error"]["code"] == 0
            log_keys = run(CLI, "--socket", daemon.socket, "keys", "export", "--log-keys").stdout.split()
            witness.start(log_keys)
            details = sign_level_0_details(client, 1)[0]
            size = int(client.call("getCheckpoint")["result"]["checkpoint"].split("\n")[1])

            # Behind the daemon's back, before the witness has seen the checkpoint.
            forged = forged_line(witness)
            db = sqlite3.connect(os.path.join(daemon.directory, "state", "stepsign.sqlite"))
            db.execute("INSERT INTO log_cosignatures (size, witness, line, created_at) VALUES (?, ?, ?, 0)",
                       (size, witness.name, forged))
            db.commit()
            db.close()

            code, outcomes, errors = push(daemon)
            assert code == 0, (outcomes, errors)
            outcome = outcomes[witness.name]
            assert outcome["outcome"] == "cosigned" and outcome["treeSize"] == size, outcomes

            reply = client.call("waitForProof", signatureID=details["dataSignatureID"], quorum=1, timeoutSeconds=10)
            assert reply["error"]["code"] == 0, reply
            text = reply["result"]["proof"]
            assert forged not in text
            checkpoint = text.split("\n\n", 1)[1]
            assert checkpoint.split("\n")[1] == str(size)
            cosignature_by_hand(checkpoint, witness)
            genuine = [line for line in checkpoint.splitlines() if line.startswith(f"\u2014 {witness.name} ")][0]
            # The tiles are published off the signing path: the note with the genuine line comes.
            deadline = time.monotonic() + 30
            while True:
                with open(os.path.join(tiles, "checkpoint")) as f:
                    published = f.read()
                if genuine in published or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert genuine in published and forged not in published, published

            proof = os.path.join(directory, "proof.tlog-proof")
            jws = os.path.join(directory, "entry.jws")
            keys = os.path.join(directory, "keys.json")
            for path, content in ((proof, text), (jws, details["payloadSignature"]),
                                  (keys, run(CLI, "--socket", daemon.socket, "keys", "export").stdout)):
                with open(path, "w") as f:
                    f.write(content)
            log_key = [a for k in log_keys for a in ("--log-key", k)]
            verified = run(VERIFY, "--keys", keys, "--min-level", "0", "--json", "--proof", proof, *log_key,
                           "--witness", witness.vkey, "--quorum", "1", jws)
            assert verified.returncode == 0, verified.stdout + verified.stderr
            assert json.loads(verified.stdout)["cosignedBy"] == [witness.name]

            audit = client.call("admin.auditVerify")["result"]
            assert audit["ok"] is False, audit
            reported = f"the stored cosignature of witness {witness.name} of the checkpoint of size {size}"
            assert reported in audit["problem"], audit
        finally:
            client.close()
            daemon.stop()
            witness.stop()
